# recycle replay: the figures are checked by hand in tests/sim/replay_test.cpp and against
# Oobleck's simulator in tests/sim/published_replay_test.cpp; here: what a user sees, and that every
# mistake is one `error:` line with exit 2 and no output file.
set(RJOB ${DATA}/replay_job.json)
set(RTRACE ${DATA}/replay_trace.csv)

cli_test("replay prints every policy" 0
  "recycle .* ## checkpoint .* ## elastic .* ## oobleck .* ## bamboo .* ## recycle's samples over: checkpoint [0-9.]+x"
  replay --job ${RJOB} --trace ${RTRACE})
# Two failures, each detected 5 s x 3 beats after it happens: 30 s of detection.
cli_test("replay --json" 0
  "\"policy\": \"recycle\", ##  *\"samples\": [0-9.e+]+, ##  *\"goodput\": [0-9.]+, ##  *\"ettr\": [0-9.]+, ##  *\"mean_throughput_samples_per_s\": [0-9.]+, ##  *\"lost_s\": [{] ##  * *\"detection\": 30[.]0,"
  replay --job ${RJOB} --trace ${RTRACE} --json --policy recycle)
cli_test("replay one policy" 0 "^small replay job.* ## policy .* ## checkpoint +[0-9.e+]+ "
  replay --job ${RJOB} --trace ${RTRACE} --policy checkpoint)
cli_shell_test("replay --timeline and --svg" 0 "time_s,policy,samples_per_s ## 0.000,recycle,.*<svg .*<polyline"
  "${P} replay --job ${RJOB} --trace ${RTRACE} --timeline ${OUT}/r.csv --svg ${OUT}/r.svg > /dev/null && head -2 ${OUT}/r.csv && cat ${OUT}/r.svg")
cli_test("replay --map scale onto the job's nodes" 0 "on 8 nodes"
  replay --job ${RJOB} --trace ${PROJECT_SOURCE_DIR}/traces/data/llama3-like.csv --map scale --days 2 --policy checkpoint)

# Every node down at 100 s and none back: every policy keeps 0 samples (tests/sim/replay_test.cpp
# works it by hand), so ReCycle's samples over each is 0 / 0: undefined, n/a.
cli_shell_test("replay: ratios over no samples are n/a" 0
  "^recycle's samples over: checkpoint n/a, elastic n/a, oobleck n/a, bamboo n/a, adaptive n/a ## "
  "printf '# nodes: 8\\n# duration_s: 1000\\ntime_s,node,event,cause\\n' > ${OUT}/rp_alldown.csv && printf '100,%s,down,x\\n' 0 1 2 3 4 5 6 7 >> ${OUT}/rp_alldown.csv && ${P} replay --job ${RJOB} --trace ${OUT}/rp_alldown.csv --quiet | grep 'samples over'")
# The table in fixed notation. No failure in 1,000,000 s at T0 = 10 ms (the step table's 2x4,
# Bamboo's too): cycles of 600 s of training and a 60 s write, 1,515 of them (999,900 s), then
# 100 s: 1,515 x 60,000 + 10,000 = 90,910,000 iterations of 16 samples = 1,454,560,000 samples,
# 1,454.56 samples/s, goodput and ettr 0.9091; GPU-hours 8 x 1,000,000 / 3,600 = 2,222.22.
cli_shell_test("replay table in fixed notation" 0
  "recycle +1454560000[.]0 +1454[.]560 +0[.]9091 +0[.]9091 +0 +0 .* ## bamboo +1454560000[.]0 +1454[.]560 +0[.]9091 +0[.]9091 +0 +0 .*GPU-hours [(]every policy, spares included[)]: 2222[.]22 ## $"
  "printf '# nodes: 8\\n# duration_s: 1000000\\ntime_s,node,event,cause\\n' > ${OUT}/rp_quiet.csv && printf 'config,iteration_s\\n2x4,0.01\\n' > ${OUT}/rp_quiet_steps.csv && ${P} replay --job ${RJOB} --trace ${OUT}/rp_quiet.csv --step-table ${OUT}/rp_quiet_steps.csv --quiet")
cli_test("replay: unknown policy" 2 "error: --policy: unknown policy 'spot'"
  replay --job ${RJOB} --trace ${RTRACE} --policy spot)
cli_test("replay: trace larger than the cluster needs --map" 2
  "error: --trace: .*llama3-like.csv watched 2048 nodes and the job's cluster has 8[;] --map wrap or --map scale"
  replay --job ${RJOB} --trace ${PROJECT_SOURCE_DIR}/traces/data/llama3-like.csv)
cli_test("replay: spares and nodes that disagree" 2
  "error: .*replay_spares.json: cluster.nodes: 8 nodes is not the job's 8 .* plus 2 spares"
  replay --job ${DATA}/replay_spares.json --trace ${RTRACE})
cli_test("replay: --days shorter than a millisecond" 2 "^error: --days: 1e-15 days is shorter than a millisecond, the finest step a trace is generated or cut at ## $"
  replay --job ${RJOB} --trace ${RTRACE} --days 1e-15)
# The bound in full: the trace ends at 10,000 s, 10000 / 86400 = 0.11574074074074074 days.
cli_test("replay: --days past the trace" 2 "error: --days: must be > 0 and at most the trace's 0[.]11574074074074074 days, got 3 ## $"
  replay --job ${RJOB} --trace ${RTRACE} --days 3)
cli_test("replay: bad step table names the line" 2 "error: .*replay_bad_steps.csv:4: "
  replay --job ${RJOB} --trace ${RTRACE} --step-table ${DATA}/replay_bad_steps.csv)
# Simulated time is whole nanoseconds: 1e-12 s rounds to 0 ns, so neither an iteration nor a
# checkpoint interval of 1e-12 s is a time > 0; each is refused where it is given.
cli_shell_test("replay: a step time that rounds to 0 ns" 2
  "^error: [^ ]*rp_tiny_steps.csv:2: '1e-12' seconds rounds to 0 ns"
  "printf 'config,iteration_s\\n2x4,1e-12\\n' > ${OUT}/rp_tiny_steps.csv && ${P} replay --job ${RJOB} --trace ${RTRACE} --step-table ${OUT}/rp_tiny_steps.csv")
cli_shell_test("replay: a shrunk job's step time that rounds to 0 ns" 2
  "^error: [^ ]*rp_tiny_steps1.csv:2: '1e-12' seconds rounds to 0 ns"
  "printf 'config,iteration_s\\n1x4,1e-12\\n' > ${OUT}/rp_tiny_steps1.csv && ${P} replay --job ${RJOB} --trace ${RTRACE} --step-table ${OUT}/rp_tiny_steps1.csv")
cli_shell_test("replay: a checkpoint interval that rounds to 0 ns" 2
  "^error: [^ ]*rp_tiny_interval.json: checkpoint.interval_s: '1e-12' seconds rounds to 0 ns"
  "sed 's/\"interval_s\": 600/\"interval_s\": 1e-12/' ${RJOB} > ${OUT}/rp_tiny_interval.json && ${P} replay --job ${OUT}/rp_tiny_interval.json --trace ${RTRACE}")
cli_test("study: a swept checkpoint interval that rounds to 0 ns" 2
  "^error: [^ ]*replay_job.json [(]point 1: checkpoint.interval_s=1e-12[)]: checkpoint.interval_s: '1e-12' seconds rounds to 0 ns"
  NO_FILE ${OUT}/rp_tiny_study.csv
  study --job ${RJOB} --trace ${RTRACE} --sweep checkpoint.interval_s=600,1e-12 -o ${OUT}/rp_tiny_study.csv)
cli_test("replay: --svg into a missing directory fails first" 2
  "error: --svg: .*cannot open for writing [(]no directory"
  NO_FILE ${OUT}/no-such-dir/r.svg
  replay --job ${RJOB} --trace ${RTRACE} --svg ${OUT}/no-such-dir/r.svg)
cli_test("replay --help has examples" 0 "Examples:.*recycle replay --job"
  replay --help)

# recycle study (the grid and the byte-identical merge are unit-tested in tests/sim/study_test.cpp).
cli_shell_test("study and study merge" 0 "^# recycle study: 2 points x 1 seeds x 1 policies [(]checkpoint[)].* ## point,checkpoint.interval_s,seed,policy,.* ## 0,600,1,checkpoint,.* ## 1,1200,1,checkpoint,[^#]* ## same ## $"
  "${P} study --job ${RJOB} --sweep checkpoint.interval_s=600,1200 --policy checkpoint --trace-preset cloud-bad --days 1 -o ${OUT}/st.csv && ${P} study --job ${RJOB} --sweep checkpoint.interval_s=600,1200 --policy checkpoint --trace-preset cloud-bad --days 1 --shard 1/2 -o ${OUT}/st1.csv && ${P} study --job ${RJOB} --sweep checkpoint.interval_s=600,1200 --policy checkpoint --trace-preset cloud-bad --days 1 --shard 0/2 -o ${OUT}/st0.csv && ${P} study merge ${OUT}/st1.csv ${OUT}/st0.csv -o ${OUT}/stm.csv && cat ${OUT}/stm.csv && cmp ${OUT}/st.csv ${OUT}/stm.csv && echo same")
cli_test("study: rate needs a preset" 2 "error: --sweep: 'rate' needs --trace-preset"
  study --job ${RJOB} --sweep rate=1,2 --trace ${RTRACE})
cli_test("study: a trace or a preset" 2 "error: --trace: give either --trace FILE or --trace-preset NAME"
  study --job ${RJOB} --sweep cluster.spares=0,1)
# A swept value becomes a CSV cell that study merge reads back: a newline would split its row.
cli_shell_test("study: a swept value with a newline" 2 "^error: --sweep: value 'a.x0Ab' in 'name=a.x0Ab,c' holds a quote or a control character"
  "${P} study --job ${RJOB} --trace ${RTRACE} --sweep 'name=a
b,c' -o ${OUT}/st_nl.csv; r=$?; test ! -e ${OUT}/st_nl.csv && exit $r")
cli_test("study: bad shard" 2 "error: --shard: expected I/N with 0 <= I < N"
  study --job ${RJOB} --trace ${RTRACE} --shard 2/2)
