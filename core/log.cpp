#include "core/log.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace recycle {

void setup_logging(Verbosity verbosity) {
  auto logger = spdlog::stderr_logger_st("recycle");
  logger->set_pattern("%^%l%$: %v");
  switch (verbosity) {
    case Verbosity::kQuiet:
      logger->set_level(spdlog::level::err);
      break;
    case Verbosity::kNormal:
      logger->set_level(spdlog::level::info);
      break;
    case Verbosity::kVerbose:
      logger->set_level(spdlog::level::debug);
      break;
  }
  spdlog::set_default_logger(logger);
}

}  // namespace recycle
