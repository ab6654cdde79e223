// One stage's layers, dense or transformer blocks as its shape says, over a backend's arithmetic
// (`Ops`, executor/layer_ops.hpp): the one place that chooses the layer kind, for both backends'
// stages, so that the cpu and cuda backends compute the same workload by the same code. Both
// kinds have the same F, I and W:
//
//   Buffer forward(const float* params, const Buffer& input, std::vector<Buffer>& saved);
//       // appends what I and W read to `saved`
//   Buffer backward_input(const float* params, const std::vector<Buffer>& saved,
//                         const Buffer& output_gradient, std::vector<Buffer>& grads);
//       // the gradient of the stage input; fills `grads` with what W reads
//   void backward_weight(const std::vector<Buffer>& saved, const std::vector<Buffer>& grads,
//                        float* gradients);  // adds the gradients, laid out as the parameters
#pragma once

#include <utility>

#include "executor/dense_layers.hpp"
#include "executor/stage_math.hpp"
#include "executor/transformer_layers.hpp"

namespace recycle::executor {

/// `body(layers)` with the layers of `shape` on `ops`: TransformerLayers<Ops> or DenseLayers<Ops>.
template <class Ops, class Body>
decltype(auto) with_stage_layers(Ops& ops, const StageShape& shape, Body&& body) {
  if (shape.block == Block::kTransformer) {
    TransformerLayers<Ops> layers(ops, shape);
    return std::forward<Body>(body)(layers);
  }
  DenseLayers<Ops> layers(ops, shape);
  return std::forward<Body>(body)(layers);
}

}  // namespace recycle::executor
