# Found by the hostile-input sweep: the --network choice reaching the simulator, one rule for
# costs that take no time, no output left behind by a failed write, and streams that never end.
set(NET_PROFILE ${DATA}/network_pp2.json)

# (The report says "runtime network; barrier optimizer": "." stands for the ";" CMake would split on.)
# --network. tests/cli/data/network_pp2.json: pp 2 on one node, F = I = W = 1 ms (B = I + W = 2 ms),
# each send 1.5 MB at 1 GB/s with no latency: c = 1.5 ms > F; no optimizer time. GPipe, m 4, one
# iteration (the rendezvous case of tests/sim/simulator_test.cpp, in ms):
#   runtime: stage 0's sends queue on its stream, [1, 2.5] [2.5, 4] [4, 5.5] [5.5, 7]; stage 1's
#     F3 runs [7, 8], its Bs [8, 16]; each gradient leaves when its B ends: [10, 11.5] [12, 13.5]
#     [14, 15.5] [16, 17.5]; stage 0's B3 runs [17.5, 19.5]: 19.5 ms.
#   direct: nothing queues, each hop is c: (m + p - 1)(F + B) + 2(p - 1)c = 5 x 3 + 2 x 1.5 = 18 ms.
#   eager: the sends still run one at a time on stage 0's stream, posted as early: 19.5 ms too.
cli_test("simulate --network runtime" 0 "runtime network. barrier optimizer ## .*iteration time +19[.]5 ms "
  simulate --schedule gpipe --pp 2 --microbatches 4 --profile ${NET_PROFILE} --iterations 1
  --network runtime)
cli_test("simulate --network direct" 0 "direct network. barrier optimizer ## .*iteration time +18 ms "
  simulate --schedule gpipe --pp 2 --microbatches 4 --profile ${NET_PROFILE} --iterations 1
  --network direct)
cli_test("simulate --network eager" 0 "eager network. barrier optimizer ## .*iteration time +19[.]5 ms "
  simulate --schedule gpipe --pp 2 --microbatches 4 --profile ${NET_PROFILE} --iterations 1
  --network eager)
cli_test("simulate --network direct json" 0 "\"network\": \"direct\",.*\"iteration_time_s\": 0[.]018,"
  simulate --schedule gpipe --pp 2 --microbatches 4 --profile ${NET_PROFILE} --iterations 1
  --network direct --json)
cli_test("simulate --job --network direct" 0 "TP 2, direct network. barrier optimizer"
  simulate --job ${DATA}/job_llama3_8b.json --network direct)

# Costs that take no time: plan refuses them with simulate's rule (LayoutOptions::require_time).
# 1e-10 s rounds to 0 ns.
set(NO_TIME "^error: --costs: every action takes no time, so an iteration takes none and throughput is undefined ## $")
cli_test("plan zero costs" 2 "${NO_TIME}" NO_FILE ${OUT}/hio_zero.txt
  plan --schedule 1f1b --pp 2 --microbatches 4 --costs 0,0,0 -o ${OUT}/hio_zero.txt)
cli_test("plan sub-nanosecond costs" 2
  "^error: --costs: '1e-10' seconds rounds to 0 ns: simulated time counts whole nanoseconds. give 0 or at least 1e-9 ## $"
  plan --schedule 1f1b --pp 2 --microbatches 4 --costs 1e-10,1e-10,1e-10)
cli_shell_test("plan and simulate refuse zero costs alike" 0
  "^same: error: --costs: every action takes no time"
  "a=$(${P} plan --schedule 1f1b --pp 2 --microbatches 4 --costs 0,0,0 2>&1); b=$(${P} simulate --schedule 1f1b --pp 2 --microbatches 4 --costs 0,0,0 2>&1); [ \"$a\" = \"$b\" ] && echo \"same: $a\"")

# A failed write leaves none of the command's outputs, and says so in one line, nothing before it.
cli_shell_test("simulate -o /dev/full leaves no --svg" 0
  "^rc=2 stderr=1 svg=none ## error: /dev/full: write failed ## $"
  "rm -f ${OUT}/hio_g.svg; ${P} simulate --schedule 1f1b --pp 2 --microbatches 4 --costs 1,1,1 -o /dev/full --svg ${OUT}/hio_g.svg 2>${OUT}/hio_svg.err; echo rc=$? stderr=$(grep -c . ${OUT}/hio_svg.err) svg=$(test -e ${OUT}/hio_g.svg && echo kept || echo none); cat ${OUT}/hio_svg.err")
cli_shell_test("simulate -o /dev/full leaves no --chrome-trace" 0
  "^rc=2 stderr=1 trace=none ## error: /dev/full: write failed ## $"
  "rm -f ${OUT}/hio_t.json; ${P} simulate --schedule 1f1b --pp 2 --microbatches 4 --costs 1,1,1 -o /dev/full --chrome-trace ${OUT}/hio_t.json 2>${OUT}/hio_trace.err; echo rc=$? stderr=$(grep -c . ${OUT}/hio_trace.err) trace=$(test -e ${OUT}/hio_t.json && echo kept || echo none); cat ${OUT}/hio_trace.err")
cli_shell_test("plan -o /dev/full says only the error" 0
  "^rc=2 stderr=1 ## error: /dev/full: write failed ## $"
  "${P} plan --schedule 1f1b --pp 2 --microbatches 4 -o /dev/full 2>${OUT}/hio_plan.err; echo rc=$? stderr=$(grep -c . ${OUT}/hio_plan.err); cat ${OUT}/hio_plan.err")
# What a command prints is held until its files are in place: a failed write prints no report
# before its error, and a full standard output is an error, not a silent exit 0.
cli_shell_test("simulate --chrome-trace /dev/full prints no report" 0
  "^rc=2 stdout=0 ## error: /dev/full: write failed ## $"
  "${P} simulate --schedule 1f1b --pp 2 --microbatches 4 --costs 1,1,1 --chrome-trace /dev/full >${OUT}/hio_rep.out 2>${OUT}/hio_rep.err; echo rc=$? stdout=$(wc -c <${OUT}/hio_rep.out); cat ${OUT}/hio_rep.err")
cli_shell_test("validate --chrome-trace /dev/full prints no report" 0
  "^rc=2 stdout=0 ## error: /dev/full: write failed ## $"
  "${P} validate --backend cpu --schedule 1f1b --pp 2 --microbatches 2 --width 64 --iterations 2 --chrome-trace /dev/full >${OUT}/hio_val.out 2>${OUT}/hio_val.err; echo rc=$? stdout=$(wc -c <${OUT}/hio_val.out); cat ${OUT}/hio_val.err")
cli_shell_test("a full standard output is an error" 0
  "^rc=2 ## error: stdout: write failed: No space left on device ## $"
  "${P} plan --schedule 1f1b --pp 2 --microbatches 4 >/dev/full 2>${OUT}/hio_full.err; echo rc=$?; cat ${OUT}/hio_full.err")
# A standard output the caller closed, or whose reader left, is an error too: not output lost
# without a word (the first file opened would take its number), not a death by SIGPIPE.
cli_shell_test("a closed standard output is an error" 0
  "^rc=2 ## error: stdout: not open [(]the caller closed it[)].* ## $"
  "${P} plan --schedule 1f1b --pp 2 --microbatches 4 >&- 2>${OUT}/hio_closed.err; echo rc=$?; cat ${OUT}/hio_closed.err")
cli_shell_test("a reader that closes the pipe early is an error, not SIGPIPE" 0
  "^rc=2 ## error: stdout: write failed: Broken pipe ## $"
  "(${P} plan --schedule 1f1b --pp 64 --dp 64 --microbatches 256 --format json 2>${OUT}/hio_pipe.err; echo rc=$? >${OUT}/hio_pipe.rc) | head -c 10 >/dev/null; cat ${OUT}/hio_pipe.rc ${OUT}/hio_pipe.err")
cli_shell_test("a full standard output leaves no --svg file" 0
  "^rc=2 file=none ## $"
  "rm -f ${OUT}/hio_full.svg; ${P} simulate --schedule 1f1b --pp 2 --microbatches 4 --costs 1,1,1 --svg ${OUT}/hio_full.svg >/dev/full 2>/dev/null; echo rc=$? file=$(test -e ${OUT}/hio_full.svg && echo kept || echo none)")
cli_shell_test("-o /dev/stdout comes in order with the report" 0
  "^same ## $"
  "a=$(${P} simulate --schedule 1f1b --pp 2 --microbatches 4 --costs 1,1,1 --chrome-trace - 2>/dev/null | md5sum); b=$(${P} simulate --schedule 1f1b --pp 2 --microbatches 4 --costs 1,1,1 --chrome-trace /dev/stdout 2>/dev/null | md5sum); [ \"$a\" = \"$b\" ] && echo same")
cli_shell_test("plan -o FILE says it wrote it once written" 0
  "^info: wrote [^ ]*hio_plan[.]txt [(]1f1b schedule[)] ## 1f1b: dp 1 x pp 2, 4 micro-batches, makespan 15 s"
  "rm -f ${OUT}/hio_plan.txt; ${P} plan --schedule 1f1b --pp 2 --microbatches 4 -o ${OUT}/hio_plan.txt && cat ${OUT}/hio_plan.txt")

# Streams: an endless binary one is refused at its first NUL byte, at once; a pipe still reads.
cli_test("--job /dev/zero is refused at once" 2
  "^error: /dev/zero:1: binary content [(]NUL byte[)], expected a text file ## $"
  NO_FILE ${OUT}/hio_p.json profile measure --job /dev/zero -o ${OUT}/hio_p.json)
cli_test("--job /dev/urandom is refused at once" 2
  "^error: /dev/urandom:[0-9]+: binary content [(]NUL byte[)], expected a text file ## $"
  NO_FILE ${OUT}/hio_p.json profile measure --job /dev/urandom -o ${OUT}/hio_p.json)
set_tests_properties("cli: --job /dev/zero is refused at once"
  "cli: --job /dev/urandom is refused at once" PROPERTIES TIMEOUT 20)
cli_shell_test("--job through process substitution" 0 "zb-h1: dp 2 x pp 4, 16 micro-batches"
  "bash -c '${P} simulate --job <(cat ${DATA}/job_llama3_8b.json)'")
cli_shell_test("plan --check through a pipe" 0
  "^/dev/stdin: valid: hand schedule, dp 1 x pp 2, 2 micro-batches"
  "cat ${DATA}/valid_pp2.json | ${P} plan --check /dev/stdin")

# A job file's layout or schedule that cannot be planned is named in the file, not as a flag.
cli_shell_test("plan --job: an interleave the job's schedule cannot run names the job's field" 2
  "^error: .*job_interleave.json: parallel.interleave 2: only the interleaved schedule splits a stage into chunks"
  "sed 's/\"global_batch\": 16}/\"global_batch\": 16, \"interleave\": 2}/' ${DATA}/job_tiny_gpt.json > ${OUT}/job_interleave.json && ${P} plan --job ${OUT}/job_interleave.json")
cli_shell_test("simulate --job: an empty schedule name in the job" 2
  "^error: .*job_empty_schedule.json: schedule: is empty"
  "sed 's/\"schedule\": \"1f1b\"/\"schedule\": \"\"/' ${DATA}/job_tiny_gpt.json > ${OUT}/job_empty_schedule.json && ${P} simulate --job ${OUT}/job_empty_schedule.json")

# One file for two outputs, or an output over an input: refused before any work, naming the flag.
cli_test("simulate: two outputs to one file" 2
  "^error: --svg: .*same_file.txt is also the file of --output. each output needs a file of its own"
  simulate --schedule 1f1b --pp 2 --microbatches 4 --costs 1,1,1 -o ${OUT}/same_file.txt --svg ${OUT}/same_file.txt)
cli_shell_test("profile measure --job: the profile over its own job file is refused, the job kept" 2
  "^error: --output: .*own_job.json is an input of this command too. write the output elsewhere"
  "cp ${DATA}/job_tiny_gpt.json ${OUT}/own_job.json && ${P} profile measure --job ${OUT}/own_job.json -o ${OUT}/own_job.json --repetitions 3; rc=$?; cmp -s ${DATA}/job_tiny_gpt.json ${OUT}/own_job.json || exit 9; exit $rc")
cli_test("simulate: /dev/null takes every output" 0 "iteration time"
  simulate --schedule 1f1b --pp 2 --microbatches 4 --costs 1,1,1 --svg /dev/null --chrome-trace /dev/null)

# Flags a command would ignore are refused: --check writes nothing, --trace-iteration draws in a
# trace or an SVG.
cli_shell_test("plan --check refuses -o" 0 "^rc=2 file=none ## error: --output excludes --check ## $"
  "rm -f ${OUT}/hio_check.txt; ${P} plan --schedule 1f1b --pp 2 --microbatches 4 --format json -o ${OUT}/hio_check.json 2>/dev/null && ${P} plan --check ${OUT}/hio_check.json -o ${OUT}/hio_check.txt 2>${OUT}/hio_check.err; echo rc=$? file=$(test -e ${OUT}/hio_check.txt && echo kept || echo none); cat ${OUT}/hio_check.err")
cli_shell_test("plan --check refuses --format and --pp" 0
  "^error: --format excludes --check ## error: --pp excludes --check ## $"
  "${P} plan --schedule 1f1b --pp 2 --microbatches 4 --format json -o ${OUT}/hio_check2.json 2>/dev/null && { ${P} plan --check ${OUT}/hio_check2.json --format csv; ${P} plan --check ${OUT}/hio_check2.json --pp 3; } 2>&1; true")
cli_shell_test("plan --check takes --placement and --memory-limit" 0
  "^rc=0 ## .*hio_check3[.]json: valid: 1f1b schedule, dp 1 x pp 2, 4 micro-batches"
  "${P} plan --schedule 1f1b --pp 2 --microbatches 4 --format json -o ${OUT}/hio_check3.json 2>/dev/null && ${P} plan --check ${OUT}/hio_check3.json --placement loop --memory-limit 8 >${OUT}/hio_check3.out 2>&1; echo rc=$?; cat ${OUT}/hio_check3.out")
cli_test("simulate --trace-iteration needs a trace or an SVG" 2
  "^error: --trace-iteration: draws one iteration of --chrome-trace or --svg. give one of them ## $"
  simulate --schedule 1f1b --pp 2 --microbatches 4 --costs 1,1,1 --trace-iteration 2)

# Every output flag is checked before the command runs (tools: add_output, check_outputs), so no
# command writes over its own input: the job stays a job, the trace a trace.
foreach(cmd "profile synth" "plan" "degradation" "plan-table")
  string(REPLACE " " "_" f "hio_own_${cmd}")  # a file per test: they run in parallel
  cli_shell_test("${cmd} -o over its --job is refused" 0
    "^rc=2 same ## error: --output: [^ ]*${f}[.]json is an input of this command too. write the output elsewhere ## $"
    "cp ${DATA}/replay_job.json ${OUT}/${f}.json; ${P} ${cmd} --job ${OUT}/${f}.json -o ${OUT}/${f}.json 2>${OUT}/${f}.err; echo rc=$? $(cmp -s ${DATA}/replay_job.json ${OUT}/${f}.json && echo same || echo changed); cat ${OUT}/${f}.err")
endforeach()
cli_shell_test("trace convert -o over its input is refused" 0
  "^rc=2 same ## error: --output: [^ ]*hio_own[.]csv is an input of this command too. write the output elsewhere ## $"
  "cp ${DATA}/replay_trace.csv ${OUT}/hio_own.csv; ${P} trace convert ${OUT}/hio_own.csv -o ${OUT}/hio_own.csv 2>${OUT}/hio_ownt.err; echo rc=$? $(cmp -s ${DATA}/replay_trace.csv ${OUT}/hio_own.csv && echo same || echo changed); cat ${OUT}/hio_ownt.err")
cli_test("plan -o into a missing directory is refused before planning" 2
  "^error: --output: /nonexistent-hio/x[.]json: cannot open for writing [(]no directory /nonexistent-hio[)] ## $"
  plan --schedule 1f1b --pp 2 --microbatches 4 -o /nonexistent-hio/x.json)

# Flags of one mode given in another, and values a study would silently take wrong.
set(HJ ${DATA}/replay_job.json)
set(HT ${DATA}/replay_trace.csv)
cli_test("study --seeds with --trace" 2 "^error: --trace excludes --seeds ## $"
  study --job ${HJ} --trace ${HT} --seeds 3)
cli_test("study --from with --trace-preset" 2 "^error: --from excludes --trace-preset ## $"
  study --job ${HJ} --trace-preset llama3-like --from bamboo)
cli_test("study --threads -1" 2 "^error: --threads: expected a whole number from 1 to 4096, got '-1' ## $"
  study --job ${HJ} --trace ${HT} --threads -1)
cli_test("study sweeps a key twice" 2
  "^error: --sweep: 'checkpoint[.]interval_s' is swept twice. give its values once ## $"
  study --job ${HJ} --trace ${HT} --sweep checkpoint.interval_s=600 --sweep checkpoint.interval_s=1200)
cli_test("study sweeps a value twice" 2
  "^error: --sweep: '600' is given twice in 'checkpoint[.]interval_s=600,1200,600' ## $"
  study --job ${HJ} --trace ${HT} --sweep checkpoint.interval_s=600,1200,600)
cli_test("study moves a key with itself" 2
  "^error: --sweep: 'parallel[.]pp' is swept twice. give its values once ## $"
  study --job ${HJ} --trace ${HT} --sweep parallel.pp/parallel.pp=4/8)
cli_test("study --sweep rate=0 names the sweep" 2
  "^error: --sweep rate: point 0 [(]rate=0[)]: must be > 0 failures per 1,000 node-days, got 0 ## $"
  study --job ${HJ} --trace-preset llama3-like --sweep rate=0)
cli_test("--policy all with others" 2
  "^error: --policy: 'all' stands alone: it already lists every policy ## $"
  replay --job ${HJ} --trace ${HT} --policy all,recycle)
cli_test("plan-table zero costs" 2
  "^error: --costs: every action takes no time, so an iteration takes none and throughput is undefined ## $"
  NO_FILE ${OUT}/hio_pt.json plan-table --pp 2 --dp 2 --microbatches 2 --costs 0,0,0 -o ${OUT}/hio_pt.json)
cli_test("plan --time-limit without --exact" 2 "^error: --time-limit requires --exact ## $"
  plan --schedule 1f1b --pp 2 --microbatches 2 --time-limit 5)
cli_test("plan --placement without --check" 2 "^error: --placement requires --check ## $"
  plan --schedule 1f1b --pp 2 --microbatches 2 --placement v)
cli_test("plan --torch-version without csv-comms" 2
  "^error: --torch-version: sets the dialect of --format csv-comms ## $"
  plan --schedule 1f1b --pp 2 --microbatches 2 --torch-version 2.8)
cli_test("plan --comms with the text format" 2
  "^error: --comms: adds the communication to --format json. csv-comms has it ## $"
  plan --schedule 1f1b --pp 2 --microbatches 2 --comms)
cli_test("replay --seed without --map" 2
  "^error: --seed: needs --map sample or scale [(]nothing else draws at random[)] ## $"
  replay --job ${HJ} --trace ${HT} --seed -1)
cli_test("study --seed with --map wrap" 2
  "^error: --seed: --map wrap draws nothing at random: give --seed with --map sample or scale ## $"
  study --job ${HJ} --trace ${HT} --map wrap --seed 2)
# A checkpoint every nanosecond would step the job clock 10^13 times over this 10,000 s trace:
# more than 2^24 checkpoints is refused before replaying (1e-9 s and no write: 10^13 > 2^24).
cli_shell_test("replay refuses more than 2^24 checkpoints" 0
  "^rc=2 ## error: [^ ]*hio_ckpt[.]json: checkpoint[.]interval_s: 1e-09 s [(]and 0 s per write[)] over 0[.]115741 days replayed is more than 2.24 checkpoints"
  "sed -e 's/\"interval_s\": 600/\"interval_s\": 1e-9/' -e 's/\"write_s\": [0-9.]*/\"write_s\": 0/' ${HJ} > ${OUT}/hio_ckpt.json; ${P} replay --job ${OUT}/hio_ckpt.json --trace ${HT} 2>${OUT}/hio_ckpt.err; echo rc=$?; cat ${OUT}/hio_ckpt.err")
# Whole-number flags take plain decimal numbers (tools/whole_range.hpp): a space, a fraction, an
# exponent, hex or a plus sign is refused as not a whole number, not read as another value.
cli_test("--pp with a trailing space" 2 "^error: --pp: expected a whole number from 1 to 1024, got '2 ' ## $"
  plan --schedule 1f1b --pp "2 " --microbatches 4)
cli_test("--pp 0x2 is not read as 2" 2 "^error: --pp: expected a whole number from 1 to 1024, got '0x2' ## $"
  plan --schedule 1f1b --pp 0x2 --microbatches 4)
cli_test("--microbatches 2.0" 2 "^error: --microbatches: expected a whole number from 1 to 65536, got '2[.]0' ## $"
  plan --schedule 1f1b --pp 2 --microbatches 2.0)
cli_test("--iterations past int64" 2 "^error: --iterations: expected a whole number from 1 to [0-9]+, got '99999999999999999999' ## $"
  simulate --schedule 1f1b --pp 2 --microbatches 4 --costs 1,1,1 --iterations 99999999999999999999)
# A cost too small for the simulator's nanoseconds is said so, not taken for "no time".
cli_test("--costs below a nanosecond" 2
  "^error: --costs: '1e-10' seconds rounds to 0 ns: simulated time counts whole nanoseconds. give 0 or at least 1e-9 ## $"
  plan --schedule 1f1b --pp 2 --microbatches 4 --costs 1e-10,1,1)
# With --job the layout comes from the job file: an error about it names the job's field, not a
# flag the command line did not give (or that the subcommand lacks).
cli_shell_test("a layout error from --job names the job's field" 2
  "^error: .*hio_jd[.]json: parallel[.]global_batch: dualpipe-v needs at least 2 x --pp [(]8[)] micro-batches, got 1 ## $"
  "sed -e 's/\"global_batch\": 32/\"global_batch\": 2/' -e 's/\"schedule\": *\"[a-z0-9-]*\"/\"schedule\": \"dualpipe-v\"/' ${DATA}/job_llama3_8b.json > ${OUT}/hio_jd.json && ${P} simulate --job ${OUT}/hio_jd.json 2>&1")
# A job of several chunks a worker replays: the job model places them as its schedule does (a V
# for zb-v, interleaved's loop), the policies that re-route or replicate one chunk a worker say
# why they cannot run, and the others run on the job's own schedule.
cli_shell_test("replay runs a zb-v job: recycle plans on its V, bamboo says why it cannot" 0
  "fault-free iteration [0-9.]+ s.*## recycle +[0-9.]+ +[0-9.]+ .*## checkpoint +[0-9.]+ .*bamboo +cannot run: .*zb-v runs 2 chunks a worker placed in a V[;] Bamboo's stage replicates the one stage after it ## adaptive +[0-9.]+ .*## GPU-hours"
  "sed '0,/{/s//{\"schedule\": \"zb-v\", /' ${DATA}/replay_job.json > ${OUT}/hio_rz.json && ${P} replay --job ${OUT}/hio_rz.json --trace ${DATA}/replay_trace.csv 2>&1")
cli_shell_test("replay runs an interleaved job: recycle plans on its chunks, bamboo says why it cannot" 0
  "## recycle +[0-9.]+ +[0-9.]+ .*## checkpoint +[0-9.]+ .*## elastic +[0-9.]+ .*## oobleck +[0-9.]+ .*bamboo +cannot run: .*interleaved runs 2 chunks a worker[;] .*## adaptive took: reroute 1, "
  "sed -e '0,/{/s//{\"schedule\": \"interleaved\", /' -e 's/\"dp\": 2,/\"dp\": 2, \"interleave\": 2,/' ${DATA}/replay_job.json > ${OUT}/hio_ri.json && ${P} replay --job ${OUT}/hio_ri.json --trace ${DATA}/replay_trace.csv 2>&1")
# One job, one number: every generator timed from its job file, from --schedule over another job
# file, and from the layout flags with the job's synthesized profile (tests/cli/job_or_flags.sh).
add_test(NAME "cli: a job gives one iteration time from its file, --schedule or the layout flags"
         COMMAND ${EXPECT} 0 "agree: 7 generators ## $" -- ${CMAKE_CURRENT_SOURCE_DIR}/job_or_flags.sh ${P} ${OUT}/job_or_flags)
# The replay states its baseline: the job's schedule, or the one --schedule names, which every
# policy runs with every worker up; an unknown name is refused before anything is replayed.
cli_test("replay states its baseline, the schedule --schedule names" 0
  "fault-free iteration [0-9.]+ s.*## baseline: every policy runs the job's schedule, zb-h2, and is measured against it fault-free [(][0-9.]+ s an iteration[)] ## charges: detection 15 s, restart 900 s .* ## charges: oobleck re-instantiation 20 s [(]the job file.s reconfigure_s[)] ## "
  replay --job ${DATA}/replay_job.json --trace ${DATA}/replay_trace.csv --schedule zb-h2)
cli_test("replay --schedule refuses an unknown schedule" 2
  "^error: --schedule: unknown schedule 'nope'.* ## $"
  replay --job ${DATA}/replay_job.json --trace ${DATA}/replay_trace.csv --schedule nope)
cli_test("replay --match-spares needs the recycle policy" 2
  "^error: --match-spares: matches recycle's goodput: --policy must include recycle ## $"
  replay --job ${DATA}/replay_job.json --trace ${DATA}/replay_trace.csv --policy checkpoint --match-spares)
cli_test("replay --match-spares answers how many spares checkpoint-restart needs" 0
  "## spares: .*checkpoint-restart.* ## GPU-hours per 1,000 samples: recycle [0-9.]+, checkpoint-restart with [0-9]+ spare nodes? more [0-9.]+ ## $"
  replay --job ${DATA}/replay_job.json --trace ${DATA}/replay_trace.csv --match-spares)
# The knobs from other simulators are checked like every field: a wrong value names it.
cli_shell_test("replay: restart.join names its choices" 2
  "^error: .*hio_rj[.]json: restart[.]join: expected \"now\" or \"next_failure\", got \"later\" ## $"
  "sed 's/\"node_join_s\": 60,/\"node_join_s\": 60, \"join\": \"later\",/' ${DATA}/replay_job.json > ${OUT}/hio_rj.json && ${P} replay --job ${OUT}/hio_rj.json --trace ${DATA}/replay_trace.csv 2>&1")
cli_shell_test("replay: checkpoint.interval_s is seconds or auto" 2
  "^error: .*hio_ra[.]json: checkpoint[.]interval_s: expected seconds or \"auto\", got \"often\" ## $"
  "sed 's/\"interval_s\": 600/\"interval_s\": \"often\"/' ${DATA}/replay_job.json > ${OUT}/hio_ra.json && ${P} replay --job ${OUT}/hio_ra.json --trace ${DATA}/replay_trace.csv 2>&1")

# A timing past the clock's end names the cost input the user gave, not the schedule the command
# made from its flags.
cli_test("a timing past 73 years names --costs" 2
  "^error: --costs: the schedule's timing passes 73 years of simulated time.* ## $"
  simulate --schedule 1f1b --pp 4 --microbatches 65536 --costs 1e6,1e6,1e6)
cli_test("a timing past 73 years names the --profile file" 2
  "^error: .*profile_cost_1e6.json: the schedule's timing passes 73 years.* ## $"
  plan --schedule zb-h2 --pp 1 --microbatches 65536 --profile ${CMAKE_CURRENT_SOURCE_DIR}/../hostile/files/profile_cost_1e6.json)

# A limit on threads too low for the run (tests/cli/thread_limit.sh; skipped where the tests do not
# run as root with setpriv): validate refuses in one line, study runs on the threads it gets.
add_test(NAME "cli: under a thread limit validate refuses in one line and study writes the same bytes"
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/thread_limit.sh $<TARGET_FILE:recycle> ${DATA}/replay_job.json)
set_tests_properties("cli: under a thread limit validate refuses in one line and study writes the same bytes"
                     PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
