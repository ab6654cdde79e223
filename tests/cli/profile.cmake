# Job files (--job) and recycle profile. The figures themselves are checked against hand formulas
# in tests/profiles and against published measurements in tests/sim; here: that every command
# takes a job, what the reports add, and that every mistake is one `error:` line with exit 2.
set(JOB ${DATA}/job_gpt3_175b.json)

cli_test("simulate --job reports MFU" 0 "\"mfu\": 0[.][0-9]+,"
  simulate --job ${JOB} --json)
cli_test("simulate --job reports TFLOP/s per GPU" 0 "\"tflops_per_gpu\": [0-9]+[.]"
  simulate --job ${JOB} --json)
# 1024 / (16 x 1) = 64 micro-batches per pipeline, of the job's micro-batch size 1.
cli_test("simulate --job derives micro-batches from the global batch" 0
  "1f1b: dp 16 x pp 8, 64 micro-batches"
  simulate --job ${JOB})
cli_test("simulate --job table utilization" 0 "utilization +MFU [0-9.]+ %, [0-9.]+ TFLOP/s per GPU on 1024 GPUs"
  simulate --job ${JOB})
cli_test("simulate --job with another schedule" 0 "zb-h1: dp 2 x pp 4, 16 micro-batches"
  simulate --job ${DATA}/job_llama3_8b.json)
cli_test("simulate --job --schedule overrides the job's" 0 "1f1b: dp 2 x pp 4"
  simulate --job ${DATA}/job_llama3_8b.json --schedule 1f1b)
cli_test("plan --job" 0 "\"generator\": \"1f1b\""
  plan --job ${JOB} --format json)
cli_test("plan --job recycle with failures" 0 "\"generator\": \"recycle\""
  plan --job ${DATA}/job_llama3_8b.json --schedule recycle --fail 0:1 --format json)
cli_test("degradation --job" 0 "one stage"
  degradation --job ${DATA}/job_llama3_8b.json)
cli_test("--job excludes --pp" 2 "error: --pp excludes --job"
  simulate --job ${JOB} --pp 4)
cli_test("--job excludes --profile" 2 "error: --profile excludes --job"
  simulate --job ${JOB} --profile ${JOB})

cli_test("job: unknown key" 2
  "error: .*job_unknown_key.json: parallel.micro_batch_size: unknown key [(]known: tp, pp, dp"
  simulate --job ${DATA}/job_unknown_key.json)
cli_test("job: unknown model lists the shipped ones" 2
  "error: .*job_unknown_model.json: model: unknown model \"gpt4\" [(]known: gpt3-1.3b, .*llama3-8b. or give an inline spec[)]"
  simulate --job ${DATA}/job_unknown_model.json)
cli_test("job: unknown hardware lists the shipped ones" 2
  "error: .*: hardware: unknown hardware \"v100\" [(]known: a100-40g, a100-80g, h100-80g, h200. or give"
  simulate --job ${DATA}/job_unknown_hardware.json)
cli_test("job: tp not dividing the heads" 2
  "error: .*: parallel.tp: expected a divisor of the model's heads [(]96[)], got 5"
  simulate --job ${DATA}/job_tp_heads.json)
cli_test("job: tp above the GPUs of a node" 2
  "error: .*: parallel.tp: expected at most the GPUs of one node [(]8 on"
  simulate --job ${DATA}/job_tp_node.json)
cli_test("job: global batch not divisible" 2
  "error: .*: parallel.global_batch: expected a multiple of dp x microbatch_size [(]16[)], got 1000"
  simulate --job ${DATA}/job_batch.json)
# GPT-3 175B on 2 stages of 8 A100 40 GB: stage 0 holds 48 layers (87.0 B parameters) and the
# embedding (0.63 B): 87.6 B x 16 bytes = 1402 GB of state
# against 8 x 40 GiB = 344 GB.
cli_test("job: does not fit says which stage and by how much" 2
  "error: .*job_no_memory.json: stage 0 does not fit a worker: 1402 GB of parameters, .* a worker has 344 GB: [0-9]+ GB short"
  simulate --job ${DATA}/job_no_memory.json)
cli_test("job: missing file" 2 "error: .*nope.json"
  simulate --job ${DATA}/nope.json)

cli_test("profile synth writes recycle.profile/1" 0 "\"format\": \"recycle.profile/1\""
  profile synth --job ${JOB})
cli_test("profile show --job" 0 "GPT-3 175B on NVIDIA A100 SXM4 80GB .DGX A100.: 8 stages, tensor parallel 8"
  profile show --job ${JOB})
cli_test("profile show needs a file" 2 "error: profile show: give a profile FILE or --job FILE"
  profile show)
# The synthesized profile, written and read back, simulates to the same iteration as the job.
cli_shell_test("profile synth round-trips through simulate --profile" 0 "same"
  "${P} profile synth --job ${DATA}/job_llama3_8b.json -o ${OUT}/llama.json && a=$(${P} simulate --job ${DATA}/job_llama3_8b.json | grep 'iteration time') && b=$(${P} simulate --schedule zb-h1 --pp 4 --dp 2 --microbatches 16 --profile ${OUT}/llama.json | grep 'iteration time') && test \"$a\" = \"$b\" && echo same")

# Hostile sizes: refused before any arithmetic can overflow, and before a stage's time passes what
# a profile can hold.
cli_test("job: too large to represent" 2
  "error: .*huge_job.json: parallel.microbatch_size: the model and micro-batch are too large to represent"
  simulate --job ${DATA}/huge_job.json)
