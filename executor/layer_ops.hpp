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
//                                 // per row: mean m and variance v over the row (in double),
//                                 // rstd = 1 / sqrt(v + 1e-5), xhat = (x - m) rstd,
//                                 // out = xhat gain + bias
//   void layer_norm_backward(float* dx, const float* dout, const float* xhat, const float* rstd,
//                            const float* gain, int rows, int width);
//                                 // dx += rstd / width (width g - sum g - xhat sum(g xhat)) per
//                                 // row, g = dout gain, the sums over the row in double
//   void layer_norm_weight(float* dgain, float* dbias, const float* dout, const float* xhat,
//                          int rows, int width);
//                                 // dgain[c] += sum_r dout xhat, dbias[c] += sum_r dout
//   void gelu(float* out, const float* u, std::size_t n);   // GELU, tanh form
//   void gelu_backward(float* du, const float* u, std::size_t n);  // du *= GELU'(u)
//   void causal_softmax(float* p, int sequence, int count);
//                                 // each of `count` sequence x sequence row-major matrices, row
//                                 // i: softmax over columns 0..i, the later ones set to 0
//   void softmax_backward(float* dp, const float* p, int sequence, int count);
//                                 // per row: dp = p (dp - sum(dp p))
//
// Every matrix the layers hold is row-major; the helpers below turn a row-major product into the
// column-major one BLAS computes.
#pragma once

#include <cstddef>

namespace recycle::executor {

/// Layer norm's epsilon and GELU's constant sqrt(2 / pi): one value for every backend.
inline constexpr float kLayerNormEpsilon = 1e-5F;
inline constexpr float kGeluC = 0.7978845608028654F;
inline constexpr float kGeluCubic = 0.044715F;

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
