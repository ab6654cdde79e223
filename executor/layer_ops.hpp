// The arithmetic a backend supplies to the workload's layers (executor/dense_layers.hpp,
// executor/transformer_layers.hpp): the layers are written once over an `Ops` type, the cpu
// backend's on OpenBLAS and loops (executor/cpu_ops.hpp), the cuda backend's on cuBLAS and
// kernels (executor/cuda/cuda_stage.cpp). An `Ops` supplies
//
//   using Buffer;                 // data(), size(); movable
//   Buffer make(std::size_t n);   // n floats, contents unspecified
//   void copy(float* to, const float* from, std::size_t n);
//   void add(float* y, const float* x, std::size_t n);                   // y += x
//   void gemm(bool trans_a, bool trans_b, int m, int n, int k, const float* a, int lda,
//             const float* b, int ldb, float beta, float* c, int ldc);  // column-major, alpha 1
//   void gemm_batched(bool trans_a, bool trans_b, int m, int n, int k, float alpha,
//                     const float* a, int lda, std::ptrdiff_t stride_a, const float* b, int ldb,
//                     std::ptrdiff_t stride_b, float beta, float* c, int ldc,
//                     std::ptrdiff_t stride_c, int count);  // column-major, `count` products,
//                                                           // item i at a + i stride_a, ...
//   void fill_rows(float* z, const float* bias, int rows, int width);   // z[r, c] = bias[c]
//   void add_column_sums(float* db, const float* dz, int rows, int width);
//                                 // db[c] += the sum over the rows of dz[r, c], rows in order
//   void tanh_inplace(float* z, std::size_t n);
//   void tanh_backward(float* dz, const float* grad, const float* a, std::size_t n);
//                                 // dz = grad (1 - a^2)
//   void layer_norm(float* out, float* xhat, float* rstd, const float* x, const float* gain,
//                   const float* bias, int rows, int width);
//                                 // per row: mean m (0 when bias is null: RMSNorm) and
//                                 // v = the mean of (x - m)^2 over the row (in double),
//                                 // rstd = 1 / sqrt(v + 1e-5), xhat = (x - m) rstd,
//                                 // out = xhat gain (+ bias)
//   void layer_norm_backward(float* dx, const float* dout, const float* xhat, const float* rstd,
//                            const float* gain, bool centered, int rows, int width);
//                                 // dx += rstd / width (width g - sum g - xhat sum(g xhat)) per
//                                 // row, g = dout gain, the sums over the row in double; without
//                                 // the sum g term when not centered (RMSNorm)
//   void layer_norm_weight(float* dgain, float* dbias, const float* dout, const float* xhat,
//                          int rows, int width);
//                                 // dgain[c] += sum_r dout xhat, dbias[c] += sum_r dout (not
//                                 // when dbias is null)
//   void gelu(float* out, const float* u, std::size_t n);   // GELU, tanh form
//   void gelu_backward(float* du, const float* u, std::size_t n);  // du *= GELU'(u)
//   void swiglu(float* out, const float* u, int rows, int f);
//                                 // u rows x 2f (gate g, then up v): out[r, c] = SiLU(g) v,
//                                 // SiLU(g) = g / (1 + e^-g)
//   void swiglu_backward(float* du, const float* dout, const float* u, int rows, int f);
//                                 // du[r, c] = dout v SiLU'(g), du[r, f + c] = dout SiLU(g)
//   void rotary(float* x, int rows, int ld, int heads, int head_dim, int sequence, bool inverse);
//                                 // row r (position r mod sequence), each of the row's first
//                                 // `heads` heads of head_dim features: for i < head_dim/2,
//                                 // (x_i, x_j), j = i + head_dim/2, becomes
//                                 // (x_i cos - x_j sin, x_j cos + x_i sin) at the angle
//                                 // position x 10000^(-2i / head_dim), computed in double; sin
//                                 // negated when inverse (the transpose, for gradients)
//   void causal_softmax(float* p, int sequence, int count);
//                                 // each of `count` sequence x sequence row-major matrices, row
//                                 // i: softmax over columns 0..i, the later ones set to 0
//   void softmax_backward(float* dp, const float* p, int sequence, int count);
//                                 // per row: dp = p (dp - sum(dp p))
//
// Every matrix the layers hold is row-major; the helpers below turn a row-major product into the
// column-major one BLAS computes.
#pragma once

#include <cmath>
#include <cstddef>

/// Marks the element-wise functions below for the host and, compiled by nvcc, the device: the
/// cpu backend's loops and the cuda backend's kernels call the same definitions.
#ifdef __CUDACC__
#define RECYCLE_HOST_DEVICE __host__ __device__
#else
#define RECYCLE_HOST_DEVICE
#endif

namespace recycle::executor {

/// The norms' epsilon, GELU's constant sqrt(2 / pi) and the rotary embedding's base: one value
/// for every backend.
inline constexpr float kLayerNormEpsilon = 1e-5F;
inline constexpr double kRotaryBase = 10000.0;
inline constexpr float kGeluC = 0.7978845608028654F;
inline constexpr float kGeluCubic = 0.044715F;

/// GELU (tanh form) and its derivative.
RECYCLE_HOST_DEVICE inline float gelu_of(float u) {
  return 0.5F * u * (1.0F + tanhf(kGeluC * (u + kGeluCubic * u * u * u)));
}
RECYCLE_HOST_DEVICE inline float gelu_derivative(float u) {
  const float t = tanhf(kGeluC * (u + kGeluCubic * u * u * u));
  return 0.5F * (1.0F + t) + 0.5F * u * (1.0F - t * t) * kGeluC * (1.0F + 3 * kGeluCubic * u * u);
}
/// SiLU, g sigmoid(g), and its derivative sigmoid(g) (1 + g (1 - sigmoid(g))).
RECYCLE_HOST_DEVICE inline float silu_of(float g) {
  return g / (1.0F + expf(-g));
}
RECYCLE_HOST_DEVICE inline float silu_derivative(float g) {
  const float sigmoid = 1.0F / (1.0F + expf(-g));
  return sigmoid * (1.0F + g * (1.0F - sigmoid));
}
/// The rotary embedding's angle per position for feature pair i of a head of head_dim features:
/// 10000^(-2i / head_dim).
RECYCLE_HOST_DEVICE inline double rotary_frequency(int i, int head_dim) {
  return pow(kRotaryBase, -2.0 * i / head_dim);
}

/// Row-major C (m x n) = op(A) (m x k) op(B) (k x n) + beta C, with each matrix stored row-major
/// with `lda`/`ldb`/`ldc` floats per row, on column-major BLAS: C^T = op(B)^T op(A)^T. The one
/// place the layouts meet; the cpu backend's test runs it on OpenBLAS as cuBLAS is called.
template <class Ops>
void gemm_row_major(Ops& ops, bool trans_a, bool trans_b, int m, int n, int k, const float* a,
                    int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  ops.gemm(trans_b, trans_a, n, m, k, b, ldb, a, lda, beta, c, ldc);
}

/// `count` row-major products C_i = alpha op(A_i) op(B_i) + beta C_i, A_i at a + i stride_a and
/// so on, as gemm_row_major turns each into its column-major transpose.
template <class Ops>
void gemm_row_major_batched(Ops& ops, bool trans_a, bool trans_b, int m, int n, int k, float alpha,
                            const float* a, int lda, std::ptrdiff_t stride_a, const float* b,
                            int ldb, std::ptrdiff_t stride_b, float beta, float* c, int ldc,
                            std::ptrdiff_t stride_c, int count) {
  ops.gemm_batched(trans_b, trans_a, n, m, k, alpha, b, ldb, stride_b, a, lda, stride_a, beta, c,
                   ldc, stride_c, count);
}

}  // namespace recycle::executor
