// Dense layers' F, I and W (executor/stage_math.hpp says what each keeps and computes), written
// once over a backend's arithmetic (`Ops`, executor/layer_ops.hpp): the cpu backend runs them with
// OpenBLAS and loops, the cuda backend with cuBLAS and kernels (executor/cuda/).
//
// Parameters are laid out as StageParams lays them out: every layer's width x width weights, then
// every layer's biases.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "executor/layer_ops.hpp"
#include "executor/stage_math.hpp"

namespace recycle::executor {

template <class Ops>
class DenseLayers {
 public:
  using Buffer = typename Ops::Buffer;

  DenseLayers(Ops& ops, const StageShape& shape) : ops_(ops), shape_(shape) {}

  /// F: the stage output for `input`; appends each layer's input and output to `saved`.
  Buffer forward(const float* params, const Buffer& input, std::vector<Buffer>& saved) {
    const int rows = shape_.rows(), w = shape_.width;
    const std::size_t n = size();
    const float* x = input.data();
    for (std::int32_t l = 0; l < shape_.layers; ++l) {
      Buffer in = ops_.make(n);
      copy_from(in, x);
      Buffer z = ops_.make(n);
      ops_.fill_rows(z.data(), params + bias_offset(l), rows, w);
      gemm_row_major(ops_, false, false, rows, w, w, in.data(), w, params + weight_offset(l), w,
                     1.0F, z.data(), w);
      ops_.tanh_inplace(z.data(), n);
      saved.push_back(std::move(in));
      saved.push_back(std::move(z));
      x = saved.back().data();
    }
    Buffer out = ops_.make(n);
    copy_from(out, x);
    return out;
  }

  /// I: the gradient of the stage input; keeps each layer's dz in `grads` (by layer).
  Buffer backward_input(const float* params, const std::vector<Buffer>& saved,
                        const Buffer& output_gradient, std::vector<Buffer>& grads) {
    const int rows = shape_.rows(), w = shape_.width;
    const std::size_t n = size();
    grads.clear();
    grads.reserve(static_cast<std::size_t>(shape_.layers));
    for (std::int32_t l = 0; l < shape_.layers; ++l) grads.push_back(ops_.make(0));
    const float* grad = output_gradient.data();
    Buffer dx;
    for (std::int32_t l = shape_.layers - 1; l >= 0; --l) {
      const auto li = static_cast<std::size_t>(l);
      Buffer dz = ops_.make(n);
      ops_.tanh_backward(dz.data(), grad, saved[2 * li + 1].data(), n);
      Buffer next = ops_.make(n);
      // dx = dz W_l^T
      gemm_row_major(ops_, false, true, rows, w, w, dz.data(), w, params + weight_offset(l), w,
                     0.0F, next.data(), w);
      grads[li] = std::move(dz);
      dx = std::move(next);
      grad = dx.data();
    }
    return dx;
  }

  /// W: dW_l += x_l^T dz_l, db_l += the column sums of dz_l, into `gradients`.
  void backward_weight(const std::vector<Buffer>& saved, const std::vector<Buffer>& grads,
                       float* gradients) {
    const int rows = shape_.rows(), w = shape_.width;
    for (std::int32_t l = 0; l < shape_.layers; ++l) {
      const auto li = static_cast<std::size_t>(l);
      gemm_row_major(ops_, true, false, w, w, rows, saved[2 * li].data(), w, grads[li].data(), w,
                     1.0F, gradients + weight_offset(l), w);
      ops_.add_column_sums(gradients + bias_offset(l), grads[li].data(), rows, w);
    }
  }

  [[nodiscard]] std::size_t weight_offset(std::int32_t layer) const noexcept {
    const auto w = static_cast<std::size_t>(shape_.width);
    return static_cast<std::size_t>(layer) * w * w;
  }
  [[nodiscard]] std::size_t bias_offset(std::int32_t layer) const noexcept {
    const auto w = static_cast<std::size_t>(shape_.width);
    return static_cast<std::size_t>(shape_.layers) * w * w + static_cast<std::size_t>(layer) * w;
  }

 private:
  [[nodiscard]] std::size_t size() const noexcept {
    return static_cast<std::size_t>(shape_.rows()) * static_cast<std::size_t>(shape_.width);
  }
  /// `to` = the size() floats at `from`.
  void copy_from(Buffer& to, const float* from) { ops_.copy(to.data(), from, size()); }

  Ops& ops_;
  StageShape shape_;
};

}  // namespace recycle::executor
