// One stage's layers, dense or transformer blocks as its shape says, over a backend's arithmetic
// (`Ops`, executor/layer_ops.hpp): the one entry point both backends' stages call for F, I and W,
// so that the cpu and cuda backends compute the same workload by the same code.
#pragma once

#include <vector>

#include "executor/dense_layers.hpp"
#include "executor/stage_math.hpp"
#include "executor/transformer_layers.hpp"

namespace recycle::executor {

template <class Ops>
class StageLayers {
 public:
  using Buffer = typename Ops::Buffer;

  StageLayers(Ops& ops, const StageShape& shape) : ops_(ops), shape_(shape) {}

  /// F: the stage output for `input`; `saved` is cleared, then holds what I and W read.
  Buffer forward(const float* params, const Buffer& input, std::vector<Buffer>& saved) {
    saved.clear();
    if (shape_.block == Block::kTransformer)
      return TransformerLayers<Ops>(ops_, shape_).forward(params, input, saved);
    return DenseLayers<Ops>(ops_, shape_).forward(params, input, saved);
  }

  /// I: the gradient of the stage input; fills `grads` with what W reads.
  Buffer backward_input(const float* params, const std::vector<Buffer>& saved,
                        const Buffer& output_gradient, std::vector<Buffer>& grads) {
    if (shape_.block == Block::kTransformer) {
      return TransformerLayers<Ops>(ops_, shape_)
          .backward_input(params, saved, output_gradient, grads);
    }
    return DenseLayers<Ops>(ops_, shape_).backward_input(params, saved, output_gradient, grads);
  }

  /// W: adds the parameters' gradients (laid out as the parameters) to `gradients`.
  void backward_weight(const std::vector<Buffer>& saved, const std::vector<Buffer>& grads,
                       float* gradients) {
    if (shape_.block == Block::kTransformer) {
      TransformerLayers<Ops>(ops_, shape_).backward_weight(saved, grads, gradients);
      return;
    }
    DenseLayers<Ops>(ops_, shape_).backward_weight(saved, grads, gradients);
  }

 private:
  Ops& ops_;
  StageShape shape_;
};

}  // namespace recycle::executor
