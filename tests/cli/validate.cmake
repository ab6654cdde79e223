# recycle validate: the runtime's arithmetic is checked in tests/executor; here: what a user sees
# (small sizes, so the figures are not asserted, only their presence) and every mistake.
cli_test("validate compares predicted and measured" 0
  "1f1b on the cpu backend: PP 2, DP 1, 4 micro-batches .* ## measured costs per micro-batch: F [0-9.]+ ms.* ## iteration time +[0-9.]+ ms +[0-9.]+ ms +[-+][0-9.]+% ## throughput .* ## busy [(]0,0[)] .* ## micro-batches processed: 12 "
  validate --schedule 1f1b --pp 2 --microbatches 4 --width 32 --microbatch-size 4 --iterations 3 --repetitions 3)
cli_test("validate --json" 0
  "\"error_pct\": [-0-9.e]+, ##  *\"iterations\": 2, ##  *\"measured_iteration_time_s\": [0-9.e-]+, ##  *\"microbatches_processed\": 8, ##  *\"predicted_iteration_time_s\": [0-9.e-]+,"
  validate --schedule zb-h1 --pp 2 --microbatches 4 --width 32 --microbatch-size 4 --iterations 2 --repetitions 3 --json)
cli_test("validate --check-equivalence with a failed worker" 0
  "micro-batches processed: 24 .* ## equivalence: max relative weight difference against the fault-free run: [0-9.e-]+ [(]within 1e-5[)]"
  validate --schedule recycle --pp 2 --dp 2 --microbatches 4 --fail 1:0 --check-equivalence --width 32 --microbatch-size 4 --iterations 3 --repetitions 3)

cli_shell_test("validate: more workers than cores" 2
  "error: --pp/--dp: 2 live workers need 2 cores and this process may use 1"
  "taskset -c 0 ${P} validate --schedule 1f1b --pp 2 --microbatches 4 --width 32 --microbatch-size 4")
cli_test("validate: the cuda backend does not run schedules yet" 2
  "error: --backend: 'cuda': this build runs schedules on the cpu backend only"
  validate --schedule 1f1b --pp 2 --microbatches 4 --backend cuda)
cli_test("validate: a failed worker outside the layout" 2 "error: --fail: .*"
  validate --schedule recycle --pp 2 --dp 2 --microbatches 4 --fail 5:0)
cli_test("validate: one iteration cannot be timed" 2 "error: --iterations: .*"
  validate --schedule 1f1b --pp 2 --microbatches 4 --iterations 1)
