# recycle simulate. Expected numbers are worked out by hand or from the schedule formulas (uniform
# costs, --costs: free network and optimizer, so one iteration is the schedule's makespan):
#   1F1B and GPipe: (m + p - 1)(F + I + W)          pp 4, m 8, 1 s each: 11 * 3 = 33 s
#   ZB-H1 (m >= p): m(F + I + W) + (p - 1)(F + I - W)    pp 4, m 8, 1 s each: 24 + 3 = 27 s
#   bubble fraction of 1F1B: (p - 1) / (m + p - 1) = 3 / 11 = 0.2727
set(SIM_DATA ${PROJECT_SOURCE_DIR}/tests/sim/data)

cli_test("simulate 1f1b pp4 m8" 0 "iteration time +33 s"
  simulate --schedule 1f1b --pp 4 --microbatches 8 --costs 1,1,1)
cli_test("simulate 1f1b bubble fraction" 0 "bubble fraction +0[.]2727"
  simulate --schedule 1f1b --pp 4 --microbatches 8 --costs 1,1,1)
cli_test("simulate gpipe pp2 m2" 0 "iteration time +9 s"
  simulate --schedule gpipe --pp 2 --microbatches 2 --costs 1,1,1)
cli_test("simulate zb-h1 pp4 m8" 0 "iteration time +27 s"
  simulate --schedule zb-h1 --pp 4 --microbatches 8 --costs 1,1,1)
# Uneven costs: (8 + 4 - 1)(2 + 1.5 + 0.5) = 44 s.
cli_test("simulate 1f1b uneven costs" 0 "iteration time +44 s"
  simulate --schedule 1f1b --pp 4 --microbatches 8 --costs 2,1.5,0.5 --iterations 2)
# JSON: 2 pipelines x 8 micro-batches x 4 samples = 64 samples per 33 s = 1.939393... samples/s.
cli_test("simulate json throughput" 0 "\"throughput_samples_per_s\": 1[.]939393"
  simulate --schedule 1f1b --pp 4 --microbatches 8 --dp 2 --costs 1,1,1 --microbatch-size 4 --json)
cli_test("simulate json iteration time" 0 "\"iteration_time_s\": 33[.]0,"
  simulate --schedule 1f1b --pp 4 --microbatches 8 --costs 1,1,1 --json)
cli_test("simulate json workers" 0 "\"peak_inflight_microbatches\": 4[.]0"
  simulate --schedule 1f1b --pp 4 --microbatches 8 --costs 1,1,1 --json)
cli_test("simulate json critical path" 0 "\"critical_path\": [{] ## +\"length_s\": 33[.]0"
  simulate --schedule 1f1b --pp 4 --microbatches 8 --costs 1,1,1 --json)
# A profile (tests/sim/data/two_stages.json), GPipe pp 2, one micro-batch: F 1 ms, B 1 ms, each
# send 10 us + 1 MB / 1 GB/s = 1.01 ms (both workers on one node), optimizer 0.25 ms after the
# barrier: 2F + 2B + 2 sends + OPT = 2 + 2 + 2.02 + 0.25 = 6.27 ms.
cli_test("simulate with a profile" 0 "iteration time +6[.]27 ms"
  simulate --schedule gpipe --pp 2 --microbatches 1 --profile ${SIM_DATA}/two_stages.json)
cli_test("simulate staggered optimizer" 0 "staggered optimizer"
  simulate --schedule zb-h1 --pp 4 --microbatches 8 --costs 1,1,1 --staggered-optimizer)
cli_test("simulate interleaved" 0 "interleave 2"
  simulate --schedule interleaved --pp 2 --microbatches 4 --interleave 2 --costs 1,1,1)
cli_shell_test("simulate a compute-only schedule file" 0 "iteration time +33 s"
  "${P} plan --schedule 1f1b --pp 4 --microbatches 8 --format json -o ${OUT}/sim_1f1b.json && ${P} simulate --schedule-file ${OUT}/sim_1f1b.json --costs 1,1,1")
cli_shell_test("simulate a lowered schedule file" 0 "iteration time +27 s"
  "${P} plan --schedule zb-h1 --pp 4 --microbatches 8 --dp 2 --format json --comms -o ${OUT}/sim_zb.json && ${P} simulate --schedule-file ${OUT}/sim_zb.json --costs 1,1,1")
cli_shell_test("simulate a PyTorch csv file" 0 "iteration time +9 s"
  "${P} plan --schedule gpipe --pp 2 --microbatches 2 --format csv -o ${OUT}/sim_gpipe.csv && ${P} simulate --schedule-file ${OUT}/sim_gpipe.csv --costs 1,1,1")
cli_shell_test("simulate writes a valid Chrome trace" 0 "trace ok"
  "${P} simulate --schedule zb-h1 --pp 4 --microbatches 8 --costs 1,1,1 --chrome-trace ${OUT}/sim_trace.json -o /dev/null && python3 -c \"import json,sys; e=json.load(open('${OUT}/sim_trace.json'))['traceEvents']; assert {x['ph'] for x in e} == {'X','M'}; assert all(x['dur'] > 0 for x in e if x['ph'] == 'X'); assert any(x['name'] == 'thread_name' for x in e); print('trace ok')\"")
cli_shell_test("simulate writes an SVG" 0 "^<svg xmlns"
  "${P} simulate --schedule 1f1b --pp 4 --microbatches 8 --costs 1,1,1 --svg ${OUT}/sim.svg -o /dev/null && head -c 12 ${OUT}/sim.svg")
cli_shell_test("simulate is deterministic" 0 "identical"
  "for r in a b; do ${P} simulate --schedule zb-h1 --pp 4 --dp 2 --microbatches 8 --profile ${SIM_DATA}/four_stages.json --json -o ${OUT}/sim_$r.json --chrome-trace ${OUT}/sim_$r.trace || exit 1; done; cmp ${OUT}/sim_a.json ${OUT}/sim_b.json && cmp ${OUT}/sim_a.trace ${OUT}/sim_b.trace && echo identical")
# Folding identical pipelines changes nothing the user sees: the report, the trace and the chart
# of a ReCycle plan (the failed worker's 4 micro-batches go to 4 peers' pipelines; of the 3
# pipelines left untouched, 2 fold onto the first) are byte for byte those of every pipeline.
cli_shell_test("simulate folds identical pipelines without changing its outputs" 0 "identical"
  "for r in fold whole; do f=; [ $r = whole ] && f=--no-fold; ${P} simulate --schedule recycle --fail 3:2 --pp 4 --dp 8 --microbatches 4 --profile ${SIM_DATA}/four_stages.json --iterations 2 --json -o ${OUT}/fold_$r.json --chrome-trace ${OUT}/fold_$r.trace --svg ${OUT}/fold_$r.svg $f || exit 1; done; cmp ${OUT}/fold_fold.json ${OUT}/fold_whole.json && cmp ${OUT}/fold_fold.trace ${OUT}/fold_whole.trace && cmp ${OUT}/fold_fold.svg ${OUT}/fold_whole.svg && echo identical")
cli_test("simulate --help has an example" 0 "Examples:.*recycle simulate --schedule" simulate --help)

# Bad input: one error line naming the flag or file, exit 2, no output file.
cli_test("simulate without a schedule" 2 "--schedule: required" simulate --costs 1,1,1)
cli_test("simulate without costs" 2 "--costs: required" simulate --schedule 1f1b --pp 4 --microbatches 8)
cli_test("simulate missing microbatches" 2 "--microbatches: required" simulate --schedule 1f1b --pp 4 --costs 1,1,1)
cli_test("simulate unknown schedule" 2 "--schedule: unknown schedule 'foo'"
  simulate --schedule foo --pp 4 --microbatches 8 --costs 1,1,1)
cli_test("simulate negative costs" 2 "--costs" NO_FILE ${OUT}/sim_bad.svg
  simulate --schedule 1f1b --pp 2 --microbatches 2 --costs 1,-1,1 --svg ${OUT}/sim_bad.svg)
cli_test("simulate zero costs" 2 "--costs: every action takes no time"
  simulate --schedule 1f1b --pp 2 --microbatches 2 --costs 0,0,0)
cli_test("simulate profile missing a field" 2 "missing_field.json: stages\\[0\\][.]backward_weight_s: missing field"
  NO_FILE ${OUT}/sim_bad.json
  simulate --schedule gpipe --pp 2 --microbatches 1 --profile ${SIM_DATA}/missing_field.json --chrome-trace ${OUT}/sim_bad.json)
cli_test("simulate profile missing a hardware field" 2 "missing_hardware.json: hardware[.]inter_node_bandwidth_Bps: missing"
  simulate --schedule gpipe --pp 2 --microbatches 1 --profile ${SIM_DATA}/missing_hardware.json)
cli_test("simulate profile with a negative time" 2 "negative_time.json: stages\\[1\\][.]forward_s: expected a number >= 0"
  NO_FILE ${OUT}/sim_bad.svg
  simulate --schedule gpipe --pp 2 --microbatches 1 --profile ${SIM_DATA}/negative_time.json --svg ${OUT}/sim_bad.svg)
cli_test("simulate profile stage count mismatch" 2 "three_stages.json: the profile has 3 stages but the pipeline has 2"
  NO_FILE ${OUT}/sim_bad.json
  simulate --schedule 1f1b --pp 2 --microbatches 2 --profile ${SIM_DATA}/three_stages.json -o ${OUT}/sim_bad.json)
cli_shell_test("simulate schedule file and profile mismatch" 2 "two_stages.json: the profile has 2 stages but the pipeline has 4"
  "${P} -q plan --schedule 1f1b --pp 4 --microbatches 8 --format json -o ${OUT}/sim_pp4.json && ${P} simulate --schedule-file ${OUT}/sim_pp4.json --profile ${SIM_DATA}/two_stages.json")
cli_test("simulate profile missing" 2 "nope.json: no such file"
  simulate --schedule 1f1b --pp 2 --microbatches 2 --profile nope.json)
cli_test("simulate costs and profile together" 2 "excludes"
  simulate --schedule 1f1b --pp 2 --microbatches 2 --costs 1,1,1 --profile ${SIM_DATA}/two_stages.json)
cli_test("simulate schedule file with --pp" 2 "excludes"
  simulate --schedule-file ${DATA}/valid_pp2.json --pp 2 --costs 1,1,1)
cli_test("simulate schedule file missing" 2 "nope.json: no such file" simulate --schedule-file nope.json --costs 1,1,1)
cli_test("simulate invalid schedule file" 2 "missing_mb.json: invalid schedule: .*recycle plan --check"
  NO_FILE ${OUT}/sim_bad.svg
  simulate --schedule-file ${DATA}/missing_mb.json --costs 1,1,1 --svg ${OUT}/sim_bad.svg)
cli_test("simulate deadlocked schedule file" 2 "cycle.json: invalid schedule: .*deadlock"
  simulate --schedule-file ${DATA}/cycle.json --costs 1,1,1)
cli_test("simulate truncated schedule file" 2 "truncated.json:[0-9]+:[0-9]+: malformed JSON"
  simulate --schedule-file ${DATA}/truncated.json --costs 1,1,1)
cli_test("simulate --fail with zb-h1" 2 "--fail: only recycle"
  simulate --schedule zb-h1 --pp 4 --dp 2 --microbatches 8 --costs 1,1,1 --fail 0:1)
cli_test("simulate zero iterations" 2 "--iterations" simulate --schedule 1f1b --pp 2 --microbatches 2 --costs 1,1,1 --iterations 0)
cli_test("simulate trace iteration past the last" 2 "--trace-iteration: expected 1 to 4"
  NO_FILE ${OUT}/sim_bad.json
  simulate --schedule 1f1b --pp 2 --microbatches 2 --costs 1,1,1 --trace-iteration 5 --chrome-trace ${OUT}/sim_bad.json)
cli_test("simulate micro-batch size 0" 2 "--microbatch-size"
  simulate --schedule 1f1b --pp 2 --microbatches 2 --costs 1,1,1 --microbatch-size 0)
cli_test("simulate svg into a missing directory" 2 "--svg: .*cannot open for writing" NO_FILE ${OUT}/sim_bad.json
  simulate --schedule 1f1b --pp 2 --microbatches 2 --costs 1,1,1 --chrome-trace ${OUT}/sim_bad.json --svg /nonexistent-recycle-dir/x.svg)
cli_test("simulate schedule file with --memory-limit" 2 "excludes"
  simulate --schedule-file ${DATA}/valid_pp2.json --memory-limit 2 --costs 1,1,1)

# Memory in bytes (docs/recycle.md). tight_memory.json: 4 GB of state and 1 GB per micro-batch on
# 7 GB GPUs, so 3 micro-batches fit a worker; 1F1B pp 4 holds 4 on stage 0 (8 GB, 1 GB short).
cli_test("simulate 1f1b that does not fit the GPUs" 2
  "--profile: 1f1b does not fit worker [(]0,0[)]: 4 GB of state and 4 GB of activations at its peak need 8 GB, a worker has 7 GB: 1 GB short"
  NO_FILE ${OUT}/sim_tight.json
  simulate --schedule 1f1b --pp 4 --dp 2 --microbatches 8 --profile ${SIM_DATA}/tight_memory.json --json -o ${OUT}/sim_tight.json)
cli_test("plan zb-h2 within the bytes that fit" 0 "zb-h2: dp 2 x pp 4, 8 micro-batches"
  plan --schedule zb-h2 --pp 4 --dp 2 --microbatches 8 --profile ${SIM_DATA}/tight_memory.json --format text)
cli_test("simulate recycle with a failure within the bytes that fit" 0 "iteration_time_s"
  simulate --schedule recycle --fail 1:0 --pp 4 --dp 2 --microbatches 8 --profile ${SIM_DATA}/tight_memory.json --json)
cli_shell_test("simulate a schedule file that does not fit the GPUs" 2 "--profile: 1f1b does not fit worker [(]0,0[)]"
  "${P} -q plan --schedule 1f1b --pp 4 --microbatches 8 --format json -o ${OUT}/sim_tight_1f1b.json && ${P} simulate --schedule-file ${OUT}/sim_tight_1f1b.json --profile ${SIM_DATA}/tight_memory.json")
# no_room.json: stage 1 keeps 4.5 GB and one micro-batch needs 1 GB more, on 5 GB GPUs.
cli_test("plan a stage that cannot hold one micro-batch" 2
  "--profile: stage 1 does not fit a worker: 4.5 GB of parameters, gradients and optimizer state and 1 GB of activations for one micro-batch need 5.5 GB, a worker has 5 GB: 0.5 GB short"
  plan --schedule recycle --pp 2 --microbatches 4 --profile ${SIM_DATA}/no_room.json)
cli_test("simulate 1f1b on a stage that cannot hold one micro-batch" 2 "--profile: stage 1 does not fit a worker"
  simulate --schedule 1f1b --pp 2 --microbatches 4 --profile ${SIM_DATA}/no_room.json)
# plan and simulate print one steady-state iteration time, also for a plan whose iterations
# alternate (this staggered ReCycle plan repeats every two iterations): the cycle's mean, whatever
# --iterations says.
set(ALTERNATING "--schedule recycle --pp 4 --dp 4 --microbatches 8 --fail 0:1,2:2 --network direct --profile ${SIM_DATA}/four_stages.json")
cli_shell_test("plan and simulate agree on an alternating plan" 0 "^same ([0-9.]+) \\1 \\1 ## $"
  "p=$(${P} plan ${ALTERNATING} --format json | sed -n 's/.*\"period_s\": \\([0-9.]*\\),/\\1/p'); for k in 4 5; do s=$(${P} simulate ${ALTERNATING} --iterations $k --json | sed -n 's/.*\"iteration_time_s\": \\([0-9.]*\\),/\\1/p'); p=\"$p $s\"; done; echo same $p")
