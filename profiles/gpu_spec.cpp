#include "profiles/gpu_spec.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/json.hpp"

namespace recycle::profiles {

namespace {

constexpr const char* kDTypeNames[] = {"bf16", "fp16", "tf32", "fp32"};

double read_positive(const JsonView& parent, std::string_view key, double max) {
  const JsonView v = parent.at(key);
  const double x = v.as_double();
  if (!(x > 0) || x > max) v.fail("expected a number > 0 and at most " + std::to_string(max));
  return x;
}

double read_fraction(const JsonView& parent, std::string_view key) {
  const JsonView v = parent.at(key);
  const double x = v.as_double();
  if (!(x > 0) || x > 1) v.fail("expected a fraction in (0, 1]");
  return x;
}

/// Fraction of its peak a product reaches along one dimension.
double saturation(std::int64_t dim, double half) {
  const double d = static_cast<double>(dim);
  return d / (d + half);
}

}  // namespace

const char* to_string(DType dtype) noexcept {
  return kDTypeNames[static_cast<int>(dtype)];
}

std::int64_t element_bytes(DType dtype) noexcept {
  return dtype == DType::kBf16 || dtype == DType::kFp16 ? 2 : 4;
}

Seconds GpuSpec::matmul_time(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch,
                             DType dtype) const noexcept {
  if (m <= 0 || n <= 0 || k <= 0 || batch <= 0) return 0;
  const double d = efficiency.matmul_half_dim;
  const double rate = peak_flops(dtype) * efficiency.matmul * saturation(m, d) * saturation(n, d) *
                      saturation(k, d);
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) *
                       static_cast<double>(k) * static_cast<double>(batch);
  const double bytes = static_cast<double>(element_bytes(dtype)) * static_cast<double>(batch) *
                       (static_cast<double>(m) * static_cast<double>(k) +
                        static_cast<double>(k) * static_cast<double>(n) +
                        static_cast<double>(m) * static_cast<double>(n));
  return std::max(flops / rate, memory_time(bytes));
}

Seconds GpuSpec::memory_time(double bytes) const noexcept {
  return bytes / (memory_bandwidth * efficiency.memory);
}

HardwareSpec GpuSpec::network() const noexcept {
  HardwareSpec h;
  h.gpus_per_node = gpus_per_node;
  h.intra_node_bandwidth = intra_node_bandwidth * efficiency.nvlink;
  h.inter_node_bandwidth = inter_node_bandwidth * efficiency.network;
  h.intra_node_latency = to_nanos(intra_node_latency);
  h.inter_node_latency = to_nanos(inter_node_latency);
  h.memory_bytes = memory_bytes;
  return h;
}

GpuSpec gpu_from_json(const nlohmann::json& json, const std::string& source) {
  const JsonView root(json, source);
  root.only_keys({"format", "name", "sources", "matmul_flops", "memory_bytes",
                  "memory_bandwidth_Bps", "gpus_per_node", "intra_node_bandwidth_Bps",
                  "inter_node_bandwidth_Bps", "intra_node_latency_s", "inter_node_latency_s",
                  "efficiency"});
  if (const auto format = root.find("format")) format->check_format("recycle.hardware/1");
  GpuSpec g;
  if (const auto name = root.find("name")) g.name = name->as_string();
  if (const auto sources = root.find("sources")) {
    if (!sources->raw().is_object()) sources->fail("expected an object of field: citation");
    for (const auto& [key, value] : sources->raw().items()) {
      (void)sources->at(key).as_string();
    }
  }
  const JsonView flops = root.at("matmul_flops");
  flops.only_keys({"bf16", "fp16", "tf32", "fp32"});
  bool any = false;
  for (int d = 0; d < 4; ++d) {
    if (!flops.has(kDTypeNames[d])) continue;
    g.matmul_flops[d] = read_positive(flops, kDTypeNames[d], 1e18);
    any = true;
  }
  if (!any) flops.fail("expected the FLOP/s of at least one of bf16, fp16, tf32, fp32");
  g.memory_bytes = root.at("memory_bytes").as_int(1, std::int64_t{1} << 50);
  g.memory_bandwidth = read_positive(root, "memory_bandwidth_Bps", 1e15);
  g.gpus_per_node = static_cast<std::int32_t>(root.at("gpus_per_node").as_int(1, 1024));
  g.intra_node_bandwidth = read_positive(root, "intra_node_bandwidth_Bps", 1e15);
  g.inter_node_bandwidth = read_positive(root, "inter_node_bandwidth_Bps", 1e15);
  g.intra_node_latency = root.at("intra_node_latency_s").as_nonnegative();
  g.inter_node_latency = root.at("inter_node_latency_s").as_nonnegative();
  if (g.intra_node_latency > 1) root.at("intra_node_latency_s").fail("expected at most 1 second");
  if (g.inter_node_latency > 1) root.at("inter_node_latency_s").fail("expected at most 1 second");
  const JsonView e = root.at("efficiency");
  e.only_keys({"matmul", "matmul_half_dim", "memory", "nvlink", "network"});
  g.efficiency.matmul = read_fraction(e, "matmul");
  g.efficiency.matmul_half_dim = e.at("matmul_half_dim").as_nonnegative();
  if (g.efficiency.matmul_half_dim > 1e6) e.at("matmul_half_dim").fail("expected at most 1e6");
  g.efficiency.memory = read_fraction(e, "memory");
  g.efficiency.nvlink = read_fraction(e, "nvlink");
  g.efficiency.network = read_fraction(e, "network");
  return g;
}

GpuSpec load_gpu(const std::string& path) {
  return gpu_from_json(load_json(path), path);
}

}  // namespace recycle::profiles
