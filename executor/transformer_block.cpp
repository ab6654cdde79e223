#include "executor/transformer_block.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>

#include "core/rng.hpp"

namespace recycle::executor::transformer {

namespace {

/// Where each parameter tensor of a layer starts, for hidden size h, in this order: the first
/// layer norm's gain and bias (g1, b1n), Wqkv and its bias, Wo and its bias, the second layer
/// norm's gain and bias (g2, b2n), W1 and b1, W2 and b2.
struct Offsets {
  std::size_t g1, b1n, wqkv, bqkv, wo, bo, g2, b2n, w1, b1, w2, b2;

  explicit Offsets(std::int32_t width) {
    const auto h = static_cast<std::size_t>(width);
    std::size_t at = 0;
    const auto take = [&at](std::size_t n) {
      const std::size_t here = at;
      at += n;
      return here;
    };
    g1 = take(h);
    b1n = take(h);
    wqkv = take(3 * h * h);
    bqkv = take(3 * h);
    wo = take(h * h);
    bo = take(h);
    g2 = take(h);
    b2n = take(h);
    w1 = take(4 * h * h);
    b1 = take(4 * h);
    w2 = take(4 * h * h);
    b2 = take(h);
  }
};

/// What forward saves for one layer, in this order (kSavedPerLayer).
enum Saved : std::size_t {
  kXhat1,
  kRstd1,
  kLn1,
  kQkv,
  kProbs,
  kHeads,
  kXhat2,
  kRstd2,
  kLn2,
  kU,
  kGelu
};
/// What backward_input keeps for W (kGradsPerLayer): the gradients of the layer output (= of
/// the MLP's output), of the MLP's pre-activation, of LN2's output, of y1 (= of the attention
/// projection's output), of Q K V and of LN1's output.
enum Grads : std::size_t { kDy, kDu, kDln2, kDy1, kDqkv, kDln1 };

constexpr float kEpsilon = 1e-5F;
constexpr float kGeluC = 0.7978845608028654F;  // sqrt(2 / pi)

/// C (m x n) = alpha op(A) op(B) + beta C, row-major with leading dimensions.
void gemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda,
          const float* b, int ldb, float beta, float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n,
              k, alpha, a, lda, b, ldb, beta, c, ldc);
}

/// Every row of `out` (rows x cols) set to `bias`.
void fill_rows(std::vector<float>& out, int rows, int cols, const float* bias) {
  for (int r = 0; r < rows; ++r)
    std::copy(bias, bias + cols, out.begin() + std::ptrdiff_t{r} * cols);
}

/// Adds the column sums of `m` (rows x cols) to `sum`.
void add_column_sums(const std::vector<float>& m, int rows, int cols, float* sum) {
  for (int r = 0; r < rows; ++r) {
    const float* row = m.data() + std::ptrdiff_t{r} * cols;
    for (int c = 0; c < cols; ++c) sum[c] += row[c];
  }
}

/// Layer norm of each row of x (rows x h): keeps xhat and 1 / deviation, returns xhat g + b.
std::vector<float> layer_norm(const std::vector<float>& x, int rows, int h, const float* g,
                              const float* b, std::vector<float>& xhat, std::vector<float>& rstd) {
  xhat.resize(x.size());
  rstd.resize(static_cast<std::size_t>(rows));
  std::vector<float> out(x.size());
  for (int r = 0; r < rows; ++r) {
    const float* row = x.data() + std::ptrdiff_t{r} * h;
    double mean = 0, var = 0;
    for (int c = 0; c < h; ++c) mean += row[c];
    mean /= h;
    for (int c = 0; c < h; ++c) var += (row[c] - mean) * (row[c] - mean);
    var /= h;
    const auto s = static_cast<float>(1.0 / std::sqrt(var + kEpsilon));
    rstd[static_cast<std::size_t>(r)] = s;
    for (int c = 0; c < h; ++c) {
      const auto i = static_cast<std::size_t>(std::ptrdiff_t{r} * h + c);
      xhat[i] = static_cast<float>(row[c] - mean) * s;
      out[i] = xhat[i] * g[c] + b[c];
    }
  }
  return out;
}

/// Adds to `dx` the gradient of a layer norm's input from that of its output `dout`:
/// rstd / h x (h dxhat - sum dxhat - xhat sum(dxhat xhat)), dxhat = dout g.
void layer_norm_backward(const std::vector<float>& dout, const std::vector<float>& xhat,
                         const std::vector<float>& rstd, int rows, int h, const float* g,
                         std::vector<float>& dx) {
  std::vector<float> dxhat(static_cast<std::size_t>(h));
  for (int r = 0; r < rows; ++r) {
    const std::ptrdiff_t at = std::ptrdiff_t{r} * h;
    double sum = 0, dot = 0;
    for (int c = 0; c < h; ++c) {
      dxhat[static_cast<std::size_t>(c)] = dout[static_cast<std::size_t>(at + c)] * g[c];
      sum += dxhat[static_cast<std::size_t>(c)];
      dot += static_cast<double>(dxhat[static_cast<std::size_t>(c)]) *
             xhat[static_cast<std::size_t>(at + c)];
    }
    const float s = rstd[static_cast<std::size_t>(r)] / static_cast<float>(h);
    for (int c = 0; c < h; ++c) {
      const auto i = static_cast<std::size_t>(at + c);
      dx[i] += s * static_cast<float>(h * dxhat[static_cast<std::size_t>(c)] - sum - xhat[i] * dot);
    }
  }
}

float gelu(float u) {
  return 0.5F * u * (1.0F + std::tanh(kGeluC * (u + 0.044715F * u * u * u)));
}

float gelu_derivative(float u) {
  const float t = std::tanh(kGeluC * (u + 0.044715F * u * u * u));
  return 0.5F * (1.0F + t) + 0.5F * u * (1.0F - t * t) * kGeluC * (1.0F + 3 * 0.044715F * u * u);
}

}  // namespace

std::size_t layer_parameters(std::int32_t width) noexcept {
  const auto h = static_cast<std::size_t>(width);
  return 12 * h * h + 13 * h;
}

std::size_t kept_floats(const Dims& d) noexcept {
  const auto t = static_cast<std::size_t>(d.tokens());
  const auto s = static_cast<std::size_t>(d.sequence);
  return 27 * t * static_cast<std::size_t>(d.width) + 2 * t +
         static_cast<std::size_t>(d.samples) * static_cast<std::size_t>(d.heads) * s * s;
}

double flops(const Dims& d) noexcept {
  const double h = d.width;
  return 72.0 * d.tokens() * h * h + 12.0 * d.samples * d.sequence * d.sequence * h;
}

void init_layer(float* params, std::int32_t width, std::uint64_t seed) {
  const Offsets o(width);
  const auto h = static_cast<std::size_t>(width);
  Rng rng(seed);
  const auto uniform = [&rng](float* out, std::size_t n, double fan_in) {
    const double scale = std::sqrt(3.0 / fan_in);
    for (std::size_t i = 0; i < n; ++i)
      out[i] = static_cast<float>(scale * (2 * rng.uniform() - 1));
  };
  std::fill(params, params + layer_parameters(width), 0.0F);
  std::fill(params + o.g1, params + o.g1 + h, 1.0F);
  std::fill(params + o.g2, params + o.g2 + h, 1.0F);
  uniform(params + o.wqkv, 3 * h * h, static_cast<double>(h));
  uniform(params + o.wo, h * h, static_cast<double>(h));
  uniform(params + o.w1, 4 * h * h, static_cast<double>(h));
  uniform(params + o.w2, 4 * h * h, 4.0 * static_cast<double>(h));
}

std::vector<float> forward(const Dims& d, const float* p, const std::vector<float>& x,
                           std::vector<std::vector<float>>& saved) {
  const Offsets o(d.width);
  const int t = d.tokens(), h = d.width, s = d.sequence, dh = d.width / d.heads;
  const float scale = 1.0F / std::sqrt(static_cast<float>(dh));
  const std::size_t first = saved.size();
  saved.resize(first + kSavedPerLayer);
  std::vector<float>* k = saved.data() + first;

  k[kLn1] = layer_norm(x, t, h, p + o.g1, p + o.b1n, k[kXhat1], k[kRstd1]);
  std::vector<float>& qkv = k[kQkv];
  qkv.resize(static_cast<std::size_t>(t) * 3 * h);
  fill_rows(qkv, t, 3 * h, p + o.bqkv);
  gemm(false, false, t, 3 * h, h, 1.0F, k[kLn1].data(), h, p + o.wqkv, 3 * h, 1.0F, qkv.data(),
       3 * h);

  // Causal attention, one (sample, head) at a time.
  std::vector<float>& probs = k[kProbs];
  probs.assign(static_cast<std::size_t>(d.samples) * d.heads * s * s, 0.0F);
  std::vector<float>& heads = k[kHeads];
  heads.assign(static_cast<std::size_t>(t) * h, 0.0F);
  for (int b = 0; b < d.samples; ++b) {
    for (int hd = 0; hd < d.heads; ++hd) {
      const float* q = qkv.data() + std::ptrdiff_t{b} * s * 3 * h + std::ptrdiff_t{hd} * dh;
      float* pr = probs.data() + (std::ptrdiff_t{b} * d.heads + hd) * s * s;
      gemm(false, true, s, s, dh, scale, q, 3 * h, q + h, 3 * h, 0.0F, pr, s);
      for (int i = 0; i < s; ++i) {
        float* row = pr + std::ptrdiff_t{i} * s;
        const float top = *std::max_element(row, row + i + 1);
        float sum = 0;
        for (int j = 0; j <= i; ++j) sum += (row[j] = std::exp(row[j] - top));
        for (int j = 0; j <= i; ++j) row[j] /= sum;
        std::fill(row + i + 1, row + s, 0.0F);  // later tokens are masked
      }
      gemm(false, false, s, dh, s, 1.0F, pr, s, q + 2 * h, 3 * h, 0.0F,
           heads.data() + std::ptrdiff_t{b} * s * h + std::ptrdiff_t{hd} * dh, h);
    }
  }

  // y1 = x + heads Wo + bo
  std::vector<float> y1 = x;
  for (int r = 0; r < t; ++r) {
    for (int c = 0; c < h; ++c)
      y1[static_cast<std::size_t>(std::ptrdiff_t{r} * h + c)] +=
          p[o.bo + static_cast<std::size_t>(c)];
  }
  gemm(false, false, t, h, h, 1.0F, heads.data(), h, p + o.wo, h, 1.0F, y1.data(), h);

  // y = y1 + GELU(LN2(y1) W1 + b1) W2 + b2
  k[kLn2] = layer_norm(y1, t, h, p + o.g2, p + o.b2n, k[kXhat2], k[kRstd2]);
  std::vector<float>& u = k[kU];
  u.resize(static_cast<std::size_t>(t) * 4 * h);
  fill_rows(u, t, 4 * h, p + o.b1);
  gemm(false, false, t, 4 * h, h, 1.0F, k[kLn2].data(), h, p + o.w1, 4 * h, 1.0F, u.data(), 4 * h);
  std::vector<float>& g = k[kGelu];
  g.resize(u.size());
  std::transform(u.begin(), u.end(), g.begin(), gelu);
  std::vector<float> y = std::move(y1);
  for (int r = 0; r < t; ++r) {
    for (int c = 0; c < h; ++c)
      y[static_cast<std::size_t>(std::ptrdiff_t{r} * h + c)] +=
          p[o.b2 + static_cast<std::size_t>(c)];
  }
  gemm(false, false, t, h, 4 * h, 1.0F, g.data(), 4 * h, p + o.w2, h, 1.0F, y.data(), h);
  return y;
}

std::vector<float> backward_input(const Dims& d, const float* p,
                                  const std::vector<std::vector<float>>& saved, std::size_t first,
                                  const std::vector<float>& dy,
                                  std::vector<std::vector<float>>& grads) {
  const Offsets o(d.width);
  const int t = d.tokens(), h = d.width, s = d.sequence, dh = d.width / d.heads;
  const float scale = 1.0F / std::sqrt(static_cast<float>(dh));
  const std::vector<float>* k = saved.data() + first;
  const std::size_t at = grads.size();
  grads.resize(at + kGradsPerLayer);
  std::vector<float>* gr = grads.data() + at;
  gr[kDy] = dy;

  // MLP: du = (dy W2^T) * GELU'(u); dln2 = du W1^T; dy1 = dy + LN2's input gradient.
  std::vector<float>& du = gr[kDu];
  du.resize(static_cast<std::size_t>(t) * 4 * h);
  gemm(false, true, t, 4 * h, h, 1.0F, dy.data(), h, p + o.w2, h, 0.0F, du.data(), 4 * h);
  const std::vector<float>& u = k[kU];
  for (std::size_t i = 0; i < du.size(); ++i) du[i] *= gelu_derivative(u[i]);
  std::vector<float>& dln2 = gr[kDln2];
  dln2.resize(static_cast<std::size_t>(t) * h);
  gemm(false, true, t, h, 4 * h, 1.0F, du.data(), 4 * h, p + o.w1, 4 * h, 0.0F, dln2.data(), h);
  std::vector<float>& dy1 = gr[kDy1];
  dy1 = dy;
  layer_norm_backward(dln2, k[kXhat2], k[kRstd2], t, h, p + o.g2, dy1);

  // Attention: d(heads) = dy1 Wo^T, then per (sample, head) back through P V and the softmax.
  std::vector<float> dheads(static_cast<std::size_t>(t) * h);
  gemm(false, true, t, h, h, 1.0F, dy1.data(), h, p + o.wo, h, 0.0F, dheads.data(), h);
  std::vector<float>& dqkv = gr[kDqkv];
  dqkv.assign(static_cast<std::size_t>(t) * 3 * h, 0.0F);
  std::vector<float> dp(static_cast<std::size_t>(s) * s);
  const std::vector<float>& qkv = k[kQkv];
  for (int b = 0; b < d.samples; ++b) {
    for (int hd = 0; hd < d.heads; ++hd) {
      const std::ptrdiff_t head = std::ptrdiff_t{b} * s * 3 * h + std::ptrdiff_t{hd} * dh;
      const float* q = qkv.data() + head;
      float* dq = dqkv.data() + head;
      const float* pr = k[kProbs].data() + (std::ptrdiff_t{b} * d.heads + hd) * s * s;
      const float* dout = dheads.data() + std::ptrdiff_t{b} * s * h + std::ptrdiff_t{hd} * dh;
      gemm(true, false, s, dh, s, 1.0F, pr, s, dout, h, 0.0F, dq + 2 * h, 3 * h);  // dV = P^T dO
      gemm(false, true, s, s, dh, 1.0F, dout, h, q + 2 * h, 3 * h, 0.0F, dp.data(), s);  // dP
      for (int i = 0; i < s; ++i) {  // dS = P (dP - rowsum(dP P)); masked entries have P = 0
        float* row = dp.data() + std::ptrdiff_t{i} * s;
        const float* prow = pr + std::ptrdiff_t{i} * s;
        float dot = 0;
        for (int j = 0; j < s; ++j) dot += row[j] * prow[j];
        for (int j = 0; j < s; ++j) row[j] = prow[j] * (row[j] - dot);
      }
      gemm(false, false, s, dh, s, scale, dp.data(), s, q + h, 3 * h, 0.0F, dq, 3 * h);  // dQ
      gemm(true, false, s, dh, s, scale, dp.data(), s, q, 3 * h, 0.0F, dq + h, 3 * h);   // dK
    }
  }
  std::vector<float>& dln1 = gr[kDln1];
  dln1.resize(static_cast<std::size_t>(t) * h);
  gemm(false, true, t, h, 3 * h, 1.0F, dqkv.data(), 3 * h, p + o.wqkv, 3 * h, 0.0F, dln1.data(), h);
  std::vector<float> dx = dy1;
  layer_norm_backward(dln1, k[kXhat1], k[kRstd1], t, h, p + o.g1, dx);
  return dx;
}

void backward_weight(const Dims& d, const std::vector<std::vector<float>>& saved,
                     std::size_t saved_first, const std::vector<std::vector<float>>& grads,
                     std::size_t grads_first, float* gradient) {
  const Offsets o(d.width);
  const int t = d.tokens(), h = d.width;
  const std::vector<float>* k = saved.data() + saved_first;
  const std::vector<float>* gr = grads.data() + grads_first;
  // A layer norm's gain gets sum(dout xhat), its bias sum(dout), over the rows.
  const auto norm = [&](const std::vector<float>& dout, const std::vector<float>& xhat,
                        float* dgain, float* dbias) {
    for (int r = 0; r < t; ++r) {
      for (int c = 0; c < h; ++c) {
        const auto i = static_cast<std::size_t>(std::ptrdiff_t{r} * h + c);
        dgain[c] += dout[i] * xhat[i];
        dbias[c] += dout[i];
      }
    }
  };
  gemm(true, false, 4 * h, h, t, 1.0F, k[kGelu].data(), 4 * h, gr[kDy].data(), h, 1.0F,
       gradient + o.w2, h);
  add_column_sums(gr[kDy], t, h, gradient + o.b2);
  gemm(true, false, h, 4 * h, t, 1.0F, k[kLn2].data(), h, gr[kDu].data(), 4 * h, 1.0F,
       gradient + o.w1, 4 * h);
  add_column_sums(gr[kDu], t, 4 * h, gradient + o.b1);
  norm(gr[kDln2], k[kXhat2], gradient + o.g2, gradient + o.b2n);
  gemm(true, false, h, h, t, 1.0F, k[kHeads].data(), h, gr[kDy1].data(), h, 1.0F, gradient + o.wo,
       h);
  add_column_sums(gr[kDy1], t, h, gradient + o.bo);
  gemm(true, false, h, 3 * h, t, 1.0F, k[kLn1].data(), h, gr[kDqkv].data(), 3 * h, 1.0F,
       gradient + o.wqkv, 3 * h);
  add_column_sums(gr[kDqkv], t, 3 * h, gradient + o.bqkv);
  norm(gr[kDln1], k[kXhat1], gradient + o.g1, gradient + o.b1n);
}

}  // namespace recycle::executor::transformer
