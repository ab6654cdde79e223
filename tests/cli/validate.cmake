# recycle validate: the runtime's arithmetic is checked in tests/executor; here: what a user sees
# (small sizes, so the figures are not asserted, only their presence) and every mistake.
cli_test("validate compares predicted and measured" 0
  "1f1b on the cpu backend: PP 2, DP 1, 4 micro-batches .* ## measured costs per micro-batch, 2 held at once: F [0-9.]+ ms.* ## iteration time +[0-9.]+ ms +[0-9.]+ ms +[-+][0-9.]+% ##   from the run's own costs +[0-9.]+ ms +[0-9.]+ ms +[-+][0-9.]+% ##   2 iteration[(]s[)] measured: median [0-9.]+ ms, [0-9.]+ to [0-9.]+ ms[;] the prediction is (inside|outside) that range.* ## throughput .* ## busy [(]0,0[)] .* ## micro-batches processed: 12 .* ## note: the shortest action [(][FIW], 0[.][0-9]+ ms[)] takes under 1 ms: .* a larger --width [(]1024, the default, or more[)]"
  validate --schedule 1f1b --pp 2 --microbatches 4 --width 32 --microbatch-size 4 --iterations 3 --repetitions 3)
# The operations are timed holding as many micro-batches as the schedule's busiest worker: 1F1B's
# first stage holds PP = 2 (above), GPipe's every stage all 4.
cli_test("validate: GPipe's costs are timed with all its micro-batches held" 0
  "measured costs per micro-batch, 4 held at once: F "
  validate --schedule gpipe --pp 2 --microbatches 4 --width 32 --microbatch-size 4 --iterations 2 --repetitions 3)
cli_test("validate --json" 0
  "\"error_from_run_costs_pct\": [-0-9.e]+, ##  *\"error_pct\": [-0-9.e]+, ##  *\"iterations\": 2, ##  *\"machine_busier_than_assumed\": (true|false), ##  *\"machine_cores\": [0-9]+, ##  *\"measured_iteration_time_s\": [0-9.e-]+, ##  *\"measured_iteration_times_s\": [[] ##  *[0-9.e-]+ ##  *[]], ##  *\"measured_max_s\": [0-9.e-]+, ##  *\"measured_median_s\": [0-9.e-]+, ##  *\"measured_min_s\": [0-9.e-]+, ##  *\"microbatches_processed\": 8, ##  *\"other_processes_busy_cores\": [0-9.e-]+, ##  *\"predicted_from_run_costs_s\": [0-9.e-]+, ##  *\"predicted_iteration_time_s\": [0-9.e-]+, ##  *\"prediction_inside_spread\": (true|false), .* ##  *\"shortest_action_s\": [0-9.e-]+, ##  *\"shortest_action_too_short\": true ## }"
  validate --schedule zb-h1 --pp 2 --microbatches 4 --width 32 --microbatch-size 4 --iterations 2 --repetitions 3 --json)
cli_test("validate --check-equivalence with a failed worker" 0
  "micro-batches processed: 24 .* ## equivalence: max relative weight difference against the fault-free run: [0-9.e-]+ [(]within 1e-5[)]"
  validate --schedule recycle --pp 2 --dp 2 --microbatches 4 --fail 1:0 --check-equivalence --width 32 --microbatch-size 4 --iterations 3 --repetitions 3)

cli_shell_test("validate: more workers than cores share them, and the prediction says so" 0
  "2 live workers share 1 cores: worker i of the list runs on core i % 1, .* ## measured costs per micro-batch, 2 held at once, processor time with 2 threads placed as the workers: F .* ## iteration time +[0-9.]+ ms +[0-9.]+ ms +[-+][0-9.]+% ##   from the run's own costs +[0-9.]+ ms +[0-9.]+ ms +[-+][0-9.]+% ## .* ## busy [(]0,0[)] .* ## busy [(]0,1[)] "
  "taskset -c 0 ${P} validate --schedule 1f1b --pp 2 --microbatches 4 --width 32 --microbatch-size 4 --iterations 3 --repetitions 3")
cli_test("validate --block transformer: attention and MLP blocks, checked for equivalence" 0
  "recycle around 1:0 on the cpu backend: PP 2, DP 2, 4 micro-batches of 8 x 16, 1 transformer block of width 16, 4 heads, sequences of 4 per stage, 3 live workers.* ## micro-batches processed: 16 .* ## equivalence: max relative weight difference against the fault-free run: [0-9.e-]+ [(]within 1e-5[)]"
  validate --schedule recycle --pp 2 --dp 2 --microbatches 4 --fail 1:0 --check-equivalence --block transformer --width 16 --heads 4 --sequence 4 --microbatch-size 2 --layers-per-stage 1 --iterations 2 --repetitions 3)
cli_test("validate: heads that do not divide the width" 2 "error: --heads: 3 heads do not divide --width 16"
  validate --schedule 1f1b --pp 2 --microbatches 4 --block transformer --width 16 --heads 3)
cli_test("validate: an unknown block" 2 "error: --block: .*"
  validate --schedule 1f1b --pp 2 --microbatches 4 --block lstm)
cli_test("validate: a transformer run too large for memory" 2 "error: --width x --layers-per-stage x --microbatch-size x --sequence: 2 transformer blocks of width 4096.* GiB.*"
  validate --schedule 1f1b --pp 2 --microbatches 4 --block transformer --width 4096 --sequence 2048 --microbatch-size 64)
if(RECYCLE_HAVE_CUDA)
  # An empty CUDA_VISIBLE_DEVICES hides every GPU, on any machine: the backend says so and stops.
  cli_shell_test("validate --backend cuda with no GPU visible says so and stops" 2
    "error: --backend cuda: no GPU is visible"
    "CUDA_VISIBLE_DEVICES= ${P} validate --schedule 1f1b --pp 2 --microbatches 4 --backend cuda")
  cli_shell_test("profile measure --backend cuda with no GPU visible says so and stops" 2
    "error: --backend cuda: no GPU is visible"
    "CUDA_VISIBLE_DEVICES= ${P} profile measure --backend cuda --pp 2")
  cli_shell_test("validate --backend cuda with transformer blocks and no GPU visible says so" 2
    "error: --backend cuda: no GPU is visible"
    "CUDA_VISIBLE_DEVICES= ${P} validate --schedule 1f1b --pp 2 --microbatches 4 --backend cuda --block transformer --width 64 --heads 4")
  # The backend's refusal names the backend, not the job whose layer was to be measured.
  cli_shell_test("profile measure --job --backend cuda with no GPU visible names the backend" 2
    "^error: --backend cuda: no GPU is visible"
    "CUDA_VISIBLE_DEVICES= ${P} profile measure --job ${DATA}/job_tiny_gpt.json --backend cuda -o ${OUT}/no_gpu_profile.json")
else()
  cli_test("validate: a build without CUDA has no cuda backend" 2
    "error: --backend: 'cuda': this build has no cuda backend"
    validate --schedule 1f1b --pp 2 --microbatches 4 --backend cuda)
  cli_test("profile measure: a build without CUDA has no cuda backend" 2
    "error: --backend: 'cuda': this build has no cuda backend"
    profile measure --backend cuda --pp 2)
endif()
cli_test("validate: a failed worker outside the layout" 2 "error: --fail: .*"
  validate --schedule recycle --pp 2 --dp 2 --microbatches 4 --fail 5:0)
cli_test("validate: one iteration cannot be timed" 2 "error: --iterations: .*"
  validate --schedule 1f1b --pp 2 --microbatches 4 --iterations 1)

# --kill: the kill, its detection, the dropped iteration and the switch, the count; the weights
# still match the fault-free run.
cli_test("validate --kill: detected, dropped, redone on the new plan" 0
  "kill 1:1@1.5: worker [(]1,1[)] stopped at [0-9.]+ ms[;] its last heartbeat at [0-9.]+ ms[;] found silent at [0-9.]+ ms [(]5 missed beats of 10 ms[)][;] [0-9]+ iteration[(]s[)] from 1 dropped, [0-9]+ micro-batch losses uncounted[;] resumed at [0-9.]+ ms on recycle around 1:1 ## .* ## micro-batches processed: 24 [(]each of the 2 x 4 per iteration exactly once[)][;] [0-9]+ more computed in dropped iterations and redone ## equivalence: [^#]*[(]within 1e-5[)]"
  validate --schedule 1f1b --pp 2 --dp 2 --microbatches 4 --kill 1:1@1.5 --check-equivalence --width 32 --microbatch-size 4 --iterations 3 --repetitions 3)
cli_test("validate --kill --json lists the kills" 0
  "\"dropped_iterations\": [0-9]+, ##  *\"dropped_microbatches\": [0-9]+, ##  *\"kill\": \"0:0@0.2\","
  validate --schedule recycle --pp 2 --dp 2 --microbatches 4 --kill 0:0@0.2 --check-equivalence --json --width 32 --microbatch-size 4 --iterations 2 --repetitions 3)
cli_test("validate: --kill syntax" 2
  "error: --kill 1:1@x: expected DP:STAGE@ITERATION[[]\\.FRACTION[]], each of ITERATION and FRACTION 1 to 9 digits, e.g. 0:1@2.5"
  validate --schedule 1f1b --pp 2 --dp 2 --microbatches 4 --kill 1:1@x)
cli_test("validate: --kill of a worker outside the layout" 2
  "error: --kill 2:0@1: worker 2:0 is outside the layout [(]dp 0..1, stage 0..1[)]"
  validate --schedule 1f1b --pp 2 --dp 2 --microbatches 4 --kill 2:0@1)
cli_test("validate: --kill of an iteration that is not run" 2
  "error: --kill 1:0@4: iteration 4 is not run [(]--iterations 4 runs 0..3[)]"
  validate --schedule 1f1b --pp 2 --dp 2 --microbatches 4 --kill 1:0@4)
cli_test("validate: --kill of a worker that has already failed" 2
  "error: --kill 1:0@1: worker 1:0 has already failed"
  validate --schedule recycle --pp 2 --dp 2 --microbatches 4 --fail 1:0 --kill 1:0@1)
cli_test("validate: --kill that leaves a stage without a live replica" 2
  "error: --kill 1:0@2: after it .*stage 0.*: ReCycle cannot go on without a restart"
  validate --schedule recycle --pp 2 --dp 2 --microbatches 4 --fail 0:0 --kill 1:0@2)
cli_test("validate: kills out of order" 2
  "error: --kill 0:0@1: kills must come in the order they strike: this one is in iteration 1, before the previous kill.s 2"
  validate --schedule 1f1b --pp 2 --dp 3 --microbatches 4 --kill 1:0@2 --kill 0:0@1 --check-equivalence --width 32 --microbatch-size 4)

# On a shared core each action's processor time is in its args, never more than its wall time.
cli_shell_test("validate --chrome-trace on a shared core: each action's processor time" 0 "processor ok"
  "taskset -c 0 ${P} validate --schedule zb-h1 --pp 2 --microbatches 4 --width 32 --microbatch-size 4 --iterations 3 --repetitions 3 --chrome-trace ${OUT}/validate_shared_trace.json > /dev/null && python3 -c \"import json; e=json.load(open('${OUT}/validate_shared_trace.json'))['traceEvents']; x=[y for y in e if y['ph'] == 'X' and y['cat'] in ('F', 'I', 'W')]; assert len(x) == 3 * 4 * 3 * 2, len(x); assert all(0 <= y['args']['processor_us'] <= y['dur'] for y in x), [y for y in x if y['args']['processor_us'] > y['dur']][:3]; print('processor ok')\"")
# --chrome-trace: the measured timeline in simulate's format, with the kill's marks and the
# dropped work in its own category; the forwards that count are 3 iterations x DP 2 x 4
# micro-batches x 2 stages.
cli_shell_test("validate --chrome-trace writes the measured timeline" 0 "trace ok"
  "${P} validate --schedule 1f1b --pp 2 --dp 2 --microbatches 4 --kill 1:1@1.5 --check-equivalence --width 32 --microbatch-size 4 --iterations 3 --repetitions 3 --chrome-trace ${OUT}/validate_trace.json > /dev/null && python3 -c \"import json; e=json.load(open('${OUT}/validate_trace.json'))['traceEvents']; n={x['name'] for x in e if x['ph'] == 'i'}; assert n == {'killed','found silent','survivors resume'}, n; x=[x for x in e if x['ph'] == 'X']; assert all(y['dur'] >= 0 for y in x); assert any(y['cat'] == 'dropped' for y in x); assert sum(1 for y in x if y['cat'] == 'F') == 3 * 2 * 4 * 2, 'each of 3 x 2 x 4 micro-batches forward once on each of 2 stages'; print('trace ok')\"")

# recycle profile measure: the cpu backend's costs as a profile the simulator reads.
cli_shell_test("profile measure writes a profile simulate reads" 0 "iteration time"
  "${P} profile measure --pp 2 --width 32 --microbatch-size 4 --repetitions 3 -o ${OUT}/measured_profile.json && ${P} simulate --schedule 1f1b --pp 2 --microbatches 4 --profile ${OUT}/measured_profile.json")
# 8 tokens (2 sequences of 4) of width 8: 27 x 8 x 8 + 2 x 8 + 2 samples x 2 heads x 4^2 = 1808
# floats kept per block, 7232 bytes; 12 x 64 + 13 x 8 = 872 parameters, 3488 bytes.
cli_shell_test("profile measure --block transformer: the bytes of what a block keeps" 0 "\"activation_bytes\": 7232,.*\"param_bytes\": 3488"
  "${P} profile measure --block transformer --width 8 --heads 2 --sequence 4 --microbatch-size 2 --layers-per-stage 1 --repetitions 3")
# profile measure --job: the job's layer timed, the pipeline's profile built from it. The tiny
# job's stages hold 3 layers each; per layer 12 h^2 + 13 h = 49,984 parameters (h = 64) and
# 27 T h + 2 T + B heads s^2 = 118,912 kept floats (T = 64 tokens, B = 2, s = 32): 3 x 4 bytes x
# those, and one layer's output of T x h floats.
cli_shell_test("profile measure --job: the job's layer against the synthesizer, and its pipeline's profile" 0
  "per layer and micro-batch.* ## F .* ## I .* ## W .*profile: 2 stages of 3, 3 layers.*\"activation_bytes\": 1426944,.*\"output_bytes\": 16384,.*\"param_bytes\": 599808"
  "${P} profile measure --job ${DATA}/job_tiny_gpt.json --repetitions 3 -o ${OUT}/job_profile.json && cat ${OUT}/job_profile.json && ${P} simulate --schedule 1f1b --pp 2 --microbatches 4 --profile ${OUT}/job_profile.json > /dev/null")
# A Llama-style job (job_tiny_llama_tp2.json) with tp 2: h = 64, 4 of the 8 query heads and 2 of
# the 4 key/value heads, of 8 features (a = 32, kv = 16, Q K V 64 wide), SwiGLU of 88 (its first
# product 176 wide), RMSNorm, no biases. Per layer 64 + 64 x 64 + 32 x 64 + 64 + 64 x 176 +
# 88 x 64 = 23,168 parameters; kept per token 8 h + 2 x 64 + a + 2 x 176 + 88 + 2 = 1114, so
# T = 64 tokens keep 71,296 and the probabilities 2 x 4 x 32^2 = 8192 more: 79,488 floats.
# Stages of 3 layers: 3 x 4 bytes x those.
cli_shell_test("profile measure --job: a Llama-style layer (grouped-query attention, SwiGLU, RMSNorm, rotary)" 0
  "tiny Llama: one tensor-parallel rank's share of a layer \\(tp 2\\).*4 heads \\(2 key/value heads\\) of 8, an MLP of 88.* ## F .* ## I .* ## W .*\"activation_bytes\": 953856,.*\"output_bytes\": 16384,.*\"param_bytes\": 278016"
  "${P} profile measure --job ${DATA}/job_tiny_llama_tp2.json --repetitions 3 -o ${OUT}/job_llama.json && cat ${OUT}/job_llama.json")
cli_test("profile measure --job: rotary positions need heads of an even size" 2
  "error: --job: .*job_odd_rotary_heads.json: model.head_dim: 7 is odd: rotary positions pair a head's features"
  profile measure --job ${DATA}/job_odd_rotary_heads.json -o ${OUT}/never.json)
# --block llama, width 8, 2 heads of 4 sharing 1 key/value head (Q K V 16 wide), SwiGLU of 32
# (its first product 64 wide), 8 tokens (2 sequences of 4): per token 8 x 8 + 2 x 16 + 8 +
# 2 x 64 + 32 + 2 = 266 kept floats, and 2 x 2 x 4^2 probabilities: 2192 floats, 8768 bytes;
# 8 + 8 x 16 + 8 x 8 + 8 + 8 x 64 + 32 x 8 = 976 parameters, 3904 bytes.
cli_shell_test("profile measure --block llama: the bytes of a Llama-style block" 0 "\"activation_bytes\": 8768,.*\"param_bytes\": 3904"
  "${P} profile measure --block llama --width 8 --heads 2 --kv-heads 1 --sequence 4 --microbatch-size 2 --layers-per-stage 1 --repetitions 3")
cli_test("validate --block llama: key/value heads must divide the heads" 2
  "error: --kv-heads: 3 key/value heads do not divide the 4 heads"
  validate --schedule 1f1b --pp 2 --microbatches 2 --block llama --width 8 --heads 4 --kv-heads 3 --sequence 4)
# With tp 2 the layer timed is one rank's share: h = 64, 2 heads of 16 (a = 32), an MLP of 128.
# Per layer 4 a h + 2 f h + 3 a + f + 6 h = 25,184 parameters and T (8 h + 7 a + 3 f + 2) +
# B heads s^2 = 75,904 kept floats: 3 x 4 bytes x those. Each stage's F is its 3 layers times
# the measured F plus the synthesized all-reduces (the awk line checks it from the table's
# figures, to their 4 digits).
cli_shell_test("profile measure --job: one tensor-parallel rank's share of the layer" 0
  "one tensor-parallel rank's share of a layer \\(tp 2\\).*2 heads of 16, an MLP of 128.* ## tp all-reduces, in F and in I .*not run.*\"activation_bytes\": 910848,.*\"output_bytes\": 16384,.*\"param_bytes\": 302208.* ## stage F = 3 x \\(F \\+ all-reduces\\): yes"
  "${P} profile measure --job ${DATA}/job_tiny_gpt_tp2.json --repetitions 3 -o ${OUT}/job_tp2.json > ${OUT}/job_tp2.txt && cat ${OUT}/job_tp2.txt ${OUT}/job_tp2.json && awk '/^F /{f=$3} /^tp all-reduces/{c=$8} /forward_s/{gsub(/[,]/,\"\",$2); s=$2} END{d=s*1e3-3*(f+c); if(d<0)d=-d; print \"stage F = 3 x (F + all-reduces): \" (d<=3*(f+c)*1e-3 ? \"yes\" : \"no\")}' ${OUT}/job_tp2.txt ${OUT}/job_tp2.json")
cli_test("profile measure --job: GPT-3 175B's rank share is past the arithmetic limit at 20 repetitions" 2
  "error: --job: .*job_gpt3_175b.json: its layer \\(1 transformer block of width 12288, 12 heads of 128 features, an MLP of 6144, sequences of 2048\\): timing F, I and W 21 times"
  profile measure --job ${DATA}/job_gpt3_175b.json -o ${OUT}/never.json)
cli_test("profile measure --job: a layer too large to time names the job" 2
  "error: --job: .*job_huge_layer.json: its layer \\(1 transformer block of width 65536.*GiB"
  profile measure --job ${DATA}/job_huge_layer.json -o ${OUT}/never.json)
cli_test("profile measure --job: the comparison takes stdout, so the profile needs -o" 2
  "error: --output: give a FILE with --job"
  profile measure --job ${DATA}/job_tiny_gpt.json)
cli_test("profile measure --job: the job gives the shape" 2 "error: --width excludes --job"
  profile measure --job ${DATA}/job_tiny_gpt.json --width 8 -o ${OUT}/never.json)
cli_test("profile measure: --pp out of range" 2 "error: .*--pp"
  profile measure --pp 0)
# tools/validate-gpu.sh on the cpu backend at small sizes (BACKEND=cpu): a dry run of the script
# itself, every case of the three workloads, the three kills and both jobs, so that the first
# session with a GPU does not meet its first error there. 15 rows (5 cases, 3 workloads) with a
# figure for the error, 3 of them ReCycle's with its weights against the fault-free run, 3 kills'
# equivalence lines within tolerance, 2 jobs' profiles.
cli_shell_test("tools/validate-gpu.sh runs to its report (BACKEND=cpu, small sizes)" 0 "wrote .*vg.md ## rows 15 weights 3 equivalent 3 jobs 2"
  "BACKEND=cpu MPIRUN= RUNS=1 SIZE='--width 32 --microbatch-size 4 --layers-per-stage 1' TSIZE='--block transformer --width 16 --heads 2 --sequence 8 --microbatch-size 2 --layers-per-stage 1' LSIZE='--block llama --width 16 --heads 2 --kv-heads 1 --sequence 8 --microbatch-size 2 --layers-per-stage 1' JOBS='${DATA}/job_tiny_gpt.json ${DATA}/job_tiny_gpt_tp2.json' RECYCLE=${P} ${CMAKE_SOURCE_DIR}/tools/validate-gpu.sh ${OUT}/vg.md && echo rows $(grep -cE '%.*[|] (80|160) [|] [^|]* [|]$' ${OUT}/vg.md) weights $(grep -cE '[|] [0-9.]+e-[0-9]+ [|]$' ${OUT}/vg.md) equivalent $(grep -c 'within 1e-5' ${OUT}/vg.md) jobs $(grep -c '^profile: ' ${OUT}/vg.md)")

# tools/gpu/build-and-validate.sh on a machine without a GPU (NVIDIA_SMI names none, so that the
# test also holds on a machine with one): one error line, exit 2, nothing written; without the
# packages of tools/gpu/prepare.sh it says to run that first.
cli_shell_test("tools/gpu/build-and-validate.sh stops at once where no GPU is visible" 2
  "^error: tools/gpu/build-and-validate.sh: no NVIDIA GPU visible \\(/nonexistent/nvidia-smi not found\\)"
  "NVIDIA_SMI=/nonexistent/nvidia-smi ${CMAKE_SOURCE_DIR}/tools/gpu/build-and-validate.sh ${OUT}/gpu-never; rc=$?; if test -e ${OUT}/gpu-never; then echo written; exit 1; fi; exit $rc")
cli_shell_test("tools/gpu/build-and-validate.sh: no packages, no build" 2
  "^error: tools/gpu/build-and-validate.sh: /nonexistent: no packages \\(run tools/gpu/prepare.sh on the CPU machine first\\)"
  "DEPS=/nonexistent ${CMAKE_SOURCE_DIR}/tools/gpu/build-and-validate.sh --build-only")
if(TARGET recycle-cuda-info)
  cli_shell_test("recycle-cuda-info: an unknown argument" 2
    "^error: recycle-cuda-info: unknown argument '--bogus' \\(usage: recycle-cuda-info \\[--bandwidth\\]\\)"
    "$<TARGET_FILE:recycle-cuda-info> --bogus")
endif()

# Hostile inputs found by a sweep: each refused before anything is timed, naming its flag.
# 16 x 64 = 1024 live workers, past the threads OpenBLAS lets call it at once (MAX_THREADS, 64 in
# Debian's build): beyond its buffers OpenBLAS corrupts memory.
cli_test("validate: more cpu workers than OpenBLAS lets call it at once" 2
  "^error: --backend cpu: 1024 live workers: the cpu backend runs at most [0-9]+, the threads its OpenBLAS lets call it at once"
  validate --schedule 1f1b --pp 16 --dp 64 --microbatches 1 --width 16 --microbatch-size 2 --repetitions 1 --iterations 2)
# 10000 ms x 1000 beats = 10000 s to find a killed worker, past the 60 s every wait gives up after.
cli_test("validate: a heartbeat too slow to find a kill before the waits give up" 2
  "^error: --heartbeat-ms: 10000 ms x --missed-beats 1000: a killed worker would be found after 10000 s, and every wait gives up after 60 s"
  validate --schedule 1f1b --pp 2 --dp 2 --microbatches 4 --kill 1:0@1.5 --heartbeat-ms 10000 --missed-beats 1000)
cli_test("validate: a negative seed" 2 "^error: --seed: must be >= 0, got -1"
  validate --schedule 1f1b --pp 2 --microbatches 4 --seed -1)
# Several chunks a worker: each worker runs both of its chunks (the measured stage is one chunk,
# scaled to the worker's two), every micro-batch once; ReCycle on the V trains the fault-free
# run's weights.
cli_test("validate: a V-shaped schedule, two chunks a worker" 0
  "zb-v on the cpu backend: PP 2, DP 1, 4 micro-batches.* ## iteration time +[0-9.]+ ms +[0-9.]+ ms .* ## micro-batches processed: 12 "
  validate --schedule zb-v --pp 2 --microbatches 4 --width 32 --iterations 3)
cli_test("validate: ReCycle on a zb-v base around a failed worker trains the fault-free run's weights" 0
  "micro-batches processed: 16 .*equivalence: max relative weight difference against the fault-free run: [0-9.e-]+ [(]within 1e-5[)]"
  validate --schedule recycle --base zb-v --pp 2 --dp 2 --microbatches 2 --fail 1:0 --iterations 4 --width 32 --check-equivalence)
cli_test("validate: ReCycle on an interleaved base around a failed worker trains the fault-free run's weights" 0
  "micro-batches processed: 16 .*equivalence: max relative weight difference against the fault-free run: [0-9.e-]+ [(]within 1e-5[)]"
  validate --schedule recycle --base interleaved --interleave 2 --pp 2 --dp 2 --microbatches 2 --fail 0:1 --iterations 4 --width 32 --check-equivalence)
cli_test("validate: a failure set with no live replica of a stage" 2
  "^error: --fail: stage 0 has no live worker"
  validate --schedule recycle --pp 2 --dp 2 --microbatches 4 --fail 0:0,1:0)
# A kill late in the last iteration of a staggered plan: (1,1) stops before its OPT, which no
# survivor waits on; found all the same, its iteration dropped and redone, each micro-batch once.
cli_test("validate --kill late in the last iteration: found, dropped and redone" 0
  "kill 1:1@2.99: worker [(]1,1[)] stopped .* 1 iteration[(]s[)] from 2 dropped, 8 micro-batch losses uncounted[;] resumed .* ## iterations 2..2: recycle around 1:1 .* ## busy [(]0,0[)] +[0-9.]+ ms +- ## .*micro-batches processed: 24 [(]each of the 2 x 4 per iteration exactly once[)][;] 8 more computed in dropped iterations and redone ## equivalence: [^#]*[(]within 1e-5[)]"
  validate --schedule recycle --pp 2 --dp 2 --microbatches 4 --iterations 3 --width 16 --microbatch-size 2 --repetitions 3 --kill 1:1@2.99 --check-equivalence)
# Two kills in the same iteration: the second schedule finishes no iteration.
cli_test("validate: two kills in one iteration, the plan between them finishes none" 0
  "iterations 0..0: 1f1b .* ## iteration 1, dropped: recycle around 1:0 .* ## iterations 1..2: recycle around 0:1,1:0 "
  validate --schedule 1f1b --pp 2 --dp 2 --microbatches 4 --iterations 3 --width 16 --microbatch-size 2 --repetitions 3 --kill 1:0@1.5 --kill 0:1@1.5)
# Transformer flags for dense layers would be ignored: refused, naming the flag.
cli_test("validate: --heads with dense layers" 2
  "^error: --heads: shapes transformer blocks only. give --block transformer or llama"
  validate --schedule 1f1b --pp 2 --microbatches 4 --heads 8)
cli_test("profile measure: --sequence with --block dense" 2
  "^error: --sequence: shapes transformer blocks only. give --block transformer or llama"
  profile measure --block dense --sequence 8 -o ${OUT}/dense_sequence.json)
cli_test("validate: 2bw runs two weight versions, checked against PipeDream-2BW's rule" 0
  "micro-batches processed: 16 .*equivalence: max relative weight difference against sequential training under PipeDream-2BW's update, W[(]t[+]1[)] = W[(]t[)] - lr grad f[(]W[(]t-1[)][)] [(]not synchronous SGD[)]: [0-9.e-]+ [(]within 1e-5[)]"
  validate --schedule 2bw --pp 2 --dp 2 --microbatches 2 --iterations 4 --width 32 --check-equivalence)
cli_test("validate: 2bw with a kill, which drops whole iterations" 2
  "^error: --kill: a kill drops and redoes whole iterations, which a schedule of two weight versions [(]2bw[)] runs across"
  validate --schedule 2bw --pp 2 --dp 2 --microbatches 2 --iterations 4 --width 32 --kill 1:1@2.5)

# Other processes keeping every core busy during the run are measured (/proc/stat less the run's
# own processor time) and said: one busy loop per online cpu, for the run's whole length.
cli_shell_test("validate says when other processes kept the machine busy" 0
  "note: other processes kept [0-9.]+ of this machine's [0-9]+ cores busy during the run"
  "n=$(getconf _NPROCESSORS_ONLN); pids=; for i in $(seq $n); do (while :; do :; done) & pids=\"$pids $!\"; done; ${P} validate --schedule 1f1b --pp 2 --microbatches 4 --width 256 --iterations 3 --repetitions 3; r=$?; kill $pids; exit $r")
