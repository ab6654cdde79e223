# recycle replay: the figures are checked by hand in tests/sim/replay_test.cpp and against
# Oobleck's simulator in tests/sim/published_replay_test.cpp; here: what a user sees, and that every
# mistake is one `error:` line with exit 2 and no output file.
set(RJOB ${DATA}/replay_job.json)
set(RTRACE ${DATA}/replay_trace.csv)

cli_test("replay prints every policy" 0
  "recycle .*\ncheckpoint .*\nelastic .*\noobleck .*\nbamboo .*\nrecycle's samples over: checkpoint [0-9.]+x"
  replay --job ${RJOB} --trace ${RTRACE})
cli_test("replay --json" 0
  "\"policy\": \"recycle\",\n *\"samples\": [0-9.e+]+,\n *\"goodput\": [0-9.]+,\n *\"ettr\": [0-9.]+,\n *\"mean_throughput_samples_per_s\": [0-9.]+,\n *\"lost_s\": {\n *\"detection\": 15"
  replay --job ${RJOB} --trace ${RTRACE} --json --policy recycle)
cli_test("replay one policy" 0 "^small replay job.*\npolicy .*\ncheckpoint +[0-9.e+]+ "
  replay --job ${RJOB} --trace ${RTRACE} --policy checkpoint)
cli_shell_test("replay --timeline and --svg" 0 "time_s,policy,samples_per_s\n0.000,recycle,.*<svg .*<polyline"
  "${P} replay --job ${RJOB} --trace ${RTRACE} --timeline ${OUT}/r.csv --svg ${OUT}/r.svg > /dev/null && head -2 ${OUT}/r.csv && cat ${OUT}/r.svg")
cli_test("replay --map scale onto the job's nodes" 0 "on 8 nodes"
  replay --job ${RJOB} --trace ${PROJECT_SOURCE_DIR}/traces/data/llama3-like.csv --map scale --days 2 --policy checkpoint)

cli_test("replay: unknown policy" 2 "error: --policy: unknown policy 'spot'"
  replay --job ${RJOB} --trace ${RTRACE} --policy spot)
cli_test("replay: trace larger than the cluster needs --map" 2
  "error: --trace: .*llama3-like.csv watched 2048 nodes and the job's cluster has 8[;] --map wrap or --map scale"
  replay --job ${RJOB} --trace ${PROJECT_SOURCE_DIR}/traces/data/llama3-like.csv)
cli_test("replay: spares and nodes that disagree" 2
  "error: .*replay_spares.json: cluster.nodes: 8 nodes is not the job's 8 .* plus 2 spares"
  replay --job ${DATA}/replay_spares.json --trace ${RTRACE})
cli_test("replay: --days past the trace" 2 "error: --days: must be > 0 and at most the trace's 0.115741 days"
  replay --job ${RJOB} --trace ${RTRACE} --days 3)
cli_test("replay: bad step table names the line" 2 "error: .*replay_bad_steps.csv:4: "
  replay --job ${RJOB} --trace ${RTRACE} --step-table ${DATA}/replay_bad_steps.csv)
cli_test("replay: --svg into a missing directory fails first" 2
  "error: --svg: .*cannot open for writing [(]no directory"
  NO_FILE ${OUT}/no-such-dir/r.svg
  replay --job ${RJOB} --trace ${RTRACE} --svg ${OUT}/no-such-dir/r.svg)
cli_test("replay --help has examples" 0 "Examples:.*recycle replay --job"
  replay --help)
