# recycle configure: the ranking's figures are checked against brute force and `simulate --job`
# in tests/sim/configure_test.cpp; here: what the command prints, that its winner is a job file
# `simulate --job` times alike, and that every mistake is one `error:` line with exit 2.
cli_test("configure ranks and says what it searched" 0
  "searched [0-9]+ configurations: timed [0-9]+, folded [0-9]+, pruned [0-9]+"
  configure --model gpt3-1.3b --hardware a100-80g --gpus 16 --global-batch 64 --quiet)
cli_test("configure --csv" 0 "^rank,tp,pp,dp,interleave,microbatch_size,microbatches,recompute,"
  configure --model gpt3-1.3b --hardware a100-80g --gpus 16 --global-batch 64 --csv --top 2)
cli_test("configure --nodes counts the hardware's GPUs per node" 0 "on 16 x NVIDIA A100"
  configure --model gpt3-1.3b --hardware a100-80g --nodes 2 --global-batch 64 --top 1)
add_test(NAME "cli: configure's winner is a job simulate --job times alike"
         COMMAND ${EXPECT} 0 "agree: 5 spaces" -- ${CMAKE_CURRENT_SOURCE_DIR}/configure_agrees.sh ${P} ${OUT}/configure_agrees)

cli_test("configure: a model that fits no configuration" 2
  "^error: --gpus: no configuration of 8 GPUs fits: the closest is [0-9.]+ GB short per GPU[;] its weights and gradients alone need at least 19 GPUs of 85.9 GB"
  configure --model llama3-405b --hardware a100-80g --gpus 8 --global-batch 8)
cli_test("configure: a batch no dp divides" 2
  "^error: --global-batch: no configuration of 64 GPUs runs a global batch of 3 .*: its splits have dp 4, 8, 16, 32 or 64[;] a batch that one of them divides would"
  configure --model gpt3-350m --hardware a100-80g --gpus 64 --global-batch 3 --max-tp 1)
cli_test("configure: --gpus or --nodes" 2 "^error: --gpus: required: give --gpus N or --nodes N"
  configure --model gpt3-350m --hardware a100-80g --global-batch 8)
cli_test("configure: --gpus excludes --nodes" 2 "^error: --gpus excludes --nodes"
  configure --model gpt3-350m --hardware a100-80g --gpus 8 --nodes 1 --global-batch 8)
cli_test("configure: unknown schedule" 2 "^error: --schedules: unknown schedule 'zb-h3', expected one of gpipe, 1f1b,"
  configure --model gpt3-350m --hardware a100-80g --gpus 8 --global-batch 8 --schedules 1f1b,zb-h3)
cli_test("configure: unknown recompute" 2 "^error: --recompute: expected none, selective or full"
  configure --model gpt3-350m --hardware a100-80g --gpus 8 --global-batch 8 --recompute some)
cli_test("configure: unknown model" 2 "^error: --model: unknown model \"gpt5\""
  configure --model gpt5 --hardware a100-80g --gpus 8 --global-batch 8)
cli_test("configure: --json and --csv" 2 "^error: --csv: give either --json or --csv"
  configure --model gpt3-350m --hardware a100-80g --gpus 8 --global-batch 8 --json --csv)

# Under failures: the top configurations replayed on the same generated failures.
cli_test("configure under failures ranks by samples per second" 0
  "under failures [(]llama3-like preset, 1 seeds of 5 days[;] every configuration on the same failures[)]"
  configure --model gpt3-1.3b --hardware a100-80g --gpus 16 --global-batch 64 --quiet
  --trace-preset llama3-like --seeds 1 --days 5 --candidates 3 --policy recycle,checkpoint)
cli_test("configure: --policy without a trace" 2
  "^error: --policy: ranks under failures: give --trace FILE or --trace-preset NAME with it"
  configure --model gpt3-350m --hardware a100-80g --gpus 8 --global-batch 8 --policy recycle)
cli_test("configure: --trace and --trace-preset" 2 "^error: --trace: give either --trace FILE or --trace-preset NAME"
  configure --model gpt3-350m --hardware a100-80g --gpus 8 --global-batch 8 --trace-preset llama3-like --trace ${DATA}/job_gpt3_175b.json)
cli_test("configure: bad --spares" 2 "^error: --spares: "
  configure --model gpt3-350m --hardware a100-80g --gpus 8 --global-batch 8 --trace-preset llama3-like --spares 0,x)
cli_test("configure: bad --checkpoint-interval" 2 "^error: --checkpoint-interval: expected auto or seconds"
  configure --model gpt3-350m --hardware a100-80g --gpus 8 --global-batch 8 --trace-preset llama3-like --checkpoint-interval -5)
cli_test("configure: a batch past the planners' micro-batches says the most that would run" 2
  "^error: --global-batch: no configuration of 4194304 GPUs runs a global batch of 1099511627776 .*: at most 68719476736 samples would"
  configure --model gpt3-350m --hardware a100-80g --gpus 4194304 --global-batch 1099511627776 --quiet)
cli_test("configure: a sequence too long for any configuration names --sequence" 2
  "^error: --sequence: no configuration of GPT-3 Medium [(]350M[)] on 8 GPUs can be timed: .*too large"
  configure --model gpt3-350m --hardware a100-80g --gpus 8 --global-batch 8 --sequence 16777216 --quiet)
cli_test("configure --csv under failures gives the replayed rows" 0
  "^rank,fault_free_rank,tp,pp,dp,.*,policy,spares,samples_per_s,.* ## 1,1,"
  configure --model gpt3-1.3b --hardware a100-80g --gpus 16 --global-batch 64 --quiet
  --trace-preset llama3-like --seeds 1 --days 5 --candidates 2 --policy recycle --csv)

# --rate: the generated traces' failure rate (the llama3-like preset's shape without --trace-preset).
cli_test("configure --rate alone ranks under the llama3-like preset at that rate" 0
  "under failures [(]llama3-like preset at 500 failures per 1,000 node-days, 1 seeds of 2 days"
  configure --model gpt3-350m --hardware a100-80g --gpus 8 --global-batch 16 --rate 500 --days 2 --seeds 1 --quiet --top 1 --candidates 2)
cli_test("configure --rate must be positive" 2 "^error: --rate: expected failures per 1,000 node-days in [(]0, 1e6[]], got '-1' ## $"
  configure --model gpt3-350m --hardware a100-80g --gpus 8 --global-batch 16 --rate -1)
cli_test("configure --rate with a trace file is refused" 2 "^error: --rate: sets the rate of generated traces"
  configure --model gpt3-350m --hardware a100-80g --gpus 8 --global-batch 16 --rate 5 --trace ${DATA}/replay_trace.csv)
