// The cpu backend's arithmetic for the workload's layers (the `Ops` of executor/layer_ops.hpp):
// OpenBLAS for the matrix products, plain loops for the rest, one thread each.
#pragma once

#include <cstddef>
#include <vector>

namespace recycle::executor {

struct CpuOps {
  using Buffer = std::vector<float>;

  static Buffer make(std::size_t n) { return Buffer(n); }
  static void copy(float* to, const float* from, std::size_t n);
  static void add(float* y, const float* x, std::size_t n);
  static void gemm(bool trans_a, bool trans_b, int m, int n, int k, const float* a, int lda,
                   const float* b, int ldb, float beta, float* c, int ldc);
  static void gemm_batched(bool trans_a, bool trans_b, int m, int n, int k, float alpha,
                           const float* a, int lda, std::ptrdiff_t stride_a, const float* b,
                           int ldb, std::ptrdiff_t stride_b, float beta, float* c, int ldc,
                           std::ptrdiff_t stride_c, int count);
  static void fill_rows(float* z, const float* bias, int rows, int width);
  static void add_column_sums(float* db, const float* dz, int rows, int width);
  static void tanh_inplace(float* z, std::size_t n);
  static void tanh_backward(float* dz, const float* grad, const float* a, std::size_t n);
  static void layer_norm(float* out, float* xhat, float* rstd, const float* x, const float* gain,
                         const float* bias, int rows, int width);
  static void layer_norm_backward(float* dx, const float* dout, const float* xhat,
                                  const float* rstd, const float* gain, bool centered, int rows,
                                  int width);
  static void layer_norm_weight(float* dgain, float* dbias, const float* dout, const float* xhat,
                                int rows, int width);
  static void gelu(float* out, const float* u, std::size_t n);
  static void gelu_backward(float* du, const float* u, std::size_t n);
  static void swiglu(float* out, const float* u, int rows, int f);
  static void swiglu_backward(float* du, const float* dout, const float* u, int rows, int f);
  static void rotary(float* x, int rows, int ld, int heads, int head_dim, int sequence,
                     bool inverse);
  static void causal_softmax(float* p, int sequence, int count);
  static void softmax_backward(float* dp, const float* p, int sequence, int count);
};

}  // namespace recycle::executor
