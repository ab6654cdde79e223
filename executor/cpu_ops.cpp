#include "executor/cpu_ops.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>

#include "executor/layer_ops.hpp"

namespace recycle::executor {

namespace {

CBLAS_TRANSPOSE op(bool trans) {
  return trans ? CblasTrans : CblasNoTrans;
}

}  // namespace

void CpuOps::copy(float* to, const float* from, std::size_t n) {
  std::copy(from, from + n, to);
}

void CpuOps::add(float* y, const float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] += x[i];
}

void CpuOps::gemm(bool trans_a, bool trans_b, int m, int n, int k, const float* a, int lda,
                  const float* b, int ldb, float beta, float* c, int ldc) {
  cblas_sgemm(CblasColMajor, op(trans_a), op(trans_b), m, n, k, 1.0F, a, lda, b, ldb, beta, c, ldc);
}

void CpuOps::gemm_batched(bool trans_a, bool trans_b, int m, int n, int k, float alpha,
                          const float* a, int lda, std::ptrdiff_t stride_a, const float* b, int ldb,
                          std::ptrdiff_t stride_b, float beta, float* c, int ldc,
                          std::ptrdiff_t stride_c, int count) {
  for (int i = 0; i < count; ++i) {
    cblas_sgemm(CblasColMajor, op(trans_a), op(trans_b), m, n, k, alpha, a + i * stride_a, lda,
                b + i * stride_b, ldb, beta, c + i * stride_c, ldc);
  }
}

void CpuOps::fill_rows(float* z, const float* bias, int rows, int width) {
  for (int r = 0; r < rows; ++r) std::copy(bias, bias + width, z + std::ptrdiff_t{r} * width);
}

void CpuOps::add_column_sums(float* db, const float* dz, int rows, int width) {
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < width; ++c) db[c] += dz[std::ptrdiff_t{r} * width + c];
  }
}

void CpuOps::tanh_inplace(float* z, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) z[i] = std::tanh(z[i]);
}

void CpuOps::tanh_backward(float* dz, const float* grad, const float* a, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dz[i] = grad[i] * (1.0F - a[i] * a[i]);
}

void CpuOps::layer_norm(float* out, float* xhat, float* rstd, const float* x, const float* gain,
                        const float* bias, int rows, int width) {
  for (int r = 0; r < rows; ++r) {
    const std::ptrdiff_t at = std::ptrdiff_t{r} * width;
    const float* row = x + at;
    double mean = 0, var = 0;
    if (bias != nullptr) {
      for (int c = 0; c < width; ++c) mean += row[c];
      mean /= width;
    }
    for (int c = 0; c < width; ++c) var += (row[c] - mean) * (row[c] - mean);
    var /= width;
    const auto s = static_cast<float>(1.0 / std::sqrt(var + kLayerNormEpsilon));
    rstd[r] = s;
    for (int c = 0; c < width; ++c) {
      xhat[at + c] = static_cast<float>(row[c] - mean) * s;
      out[at + c] = xhat[at + c] * gain[c] + (bias != nullptr ? bias[c] : 0.0F);
    }
  }
}

void CpuOps::layer_norm_backward(float* dx, const float* dout, const float* xhat, const float* rstd,
                                 const float* gain, bool centered, int rows, int width) {
  std::vector<float> g(static_cast<std::size_t>(width));
  for (int r = 0; r < rows; ++r) {
    const std::ptrdiff_t at = std::ptrdiff_t{r} * width;
    double sum = 0, dot = 0;
    for (int c = 0; c < width; ++c) {
      g[static_cast<std::size_t>(c)] = dout[at + c] * gain[c];
      sum += g[static_cast<std::size_t>(c)];
      dot += static_cast<double>(g[static_cast<std::size_t>(c)]) * xhat[at + c];
    }
    if (!centered) sum = 0;
    const float s = rstd[r] / static_cast<float>(width);
    for (int c = 0; c < width; ++c) {
      dx[at + c] +=
          s * static_cast<float>(width * g[static_cast<std::size_t>(c)] - sum - xhat[at + c] * dot);
    }
  }
}

void CpuOps::layer_norm_weight(float* dgain, float* dbias, const float* dout, const float* xhat,
                               int rows, int width) {
  for (int r = 0; r < rows; ++r) {
    const std::ptrdiff_t at = std::ptrdiff_t{r} * width;
    for (int c = 0; c < width; ++c) {
      dgain[c] += dout[at + c] * xhat[at + c];
      if (dbias != nullptr) dbias[c] += dout[at + c];
    }
  }
}

void CpuOps::gelu(float* out, const float* u, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = gelu_of(u[i]);
}

void CpuOps::gelu_backward(float* du, const float* u, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) du[i] *= gelu_derivative(u[i]);
}

void CpuOps::swiglu(float* out, const float* u, int rows, int f) {
  for (int r = 0; r < rows; ++r) {
    const float* gate = u + std::ptrdiff_t{r} * 2 * f;
    const float* up = gate + f;
    float* o = out + std::ptrdiff_t{r} * f;
    for (int c = 0; c < f; ++c) o[c] = silu_of(gate[c]) * up[c];
  }
}

void CpuOps::swiglu_backward(float* du, const float* dout, const float* u, int rows, int f) {
  for (int r = 0; r < rows; ++r) {
    const std::ptrdiff_t at = std::ptrdiff_t{r} * 2 * f;
    const float* d = dout + std::ptrdiff_t{r} * f;
    for (int c = 0; c < f; ++c) {
      const float g = u[at + c], v = u[at + f + c];
      du[at + c] = d[c] * v * silu_derivative(g);
      du[at + f + c] = d[c] * silu_of(g);
    }
  }
}

void CpuOps::rotary(float* x, int rows, int ld, int heads, int head_dim, int sequence,
                    bool inverse) {
  const int half = head_dim / 2;
  for (int r = 0; r < rows; ++r) {
    const double position = r % sequence;
    float* row = x + std::ptrdiff_t{r} * ld;
    for (int i = 0; i < half; ++i) {
      const double angle = position * rotary_frequency(i, head_dim);
      const auto c = static_cast<float>(std::cos(angle));
      const auto s = static_cast<float>(inverse ? -std::sin(angle) : std::sin(angle));
      for (int j = 0; j < heads; ++j) {
        float* pair = row + std::ptrdiff_t{j} * head_dim + i;
        const float first = pair[0], second = pair[half];
        pair[0] = first * c - second * s;
        pair[half] = second * c + first * s;
      }
    }
  }
}

void CpuOps::causal_softmax(float* p, int sequence, int count) {
  const std::ptrdiff_t rows = std::ptrdiff_t{sequence} * count;
  for (std::ptrdiff_t r = 0; r < rows; ++r) {
    float* row = p + r * sequence;
    const auto last = static_cast<int>(r % sequence);  // a token sees itself and earlier ones
    const float top = *std::max_element(row, row + last + 1);
    float sum = 0;
    for (int j = 0; j <= last; ++j) sum += (row[j] = std::exp(row[j] - top));
    for (int j = 0; j <= last; ++j) row[j] /= sum;
    std::fill(row + last + 1, row + sequence, 0.0F);
  }
}

void CpuOps::softmax_backward(float* dp, const float* p, int sequence, int count) {
  const std::ptrdiff_t rows = std::ptrdiff_t{sequence} * count;
  for (std::ptrdiff_t r = 0; r < rows; ++r) {
    float* row = dp + r * sequence;
    const float* prow = p + r * sequence;
    float dot = 0;
    for (int j = 0; j < sequence; ++j) dot += row[j] * prow[j];
    for (int j = 0; j < sequence; ++j) row[j] = prow[j] * (row[j] - dot);
  }
}

}  // namespace recycle::executor
