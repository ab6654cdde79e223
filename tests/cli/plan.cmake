# recycle plan. Expected numbers are worked out by hand from the schedule formulas:
#   1F1B and GPipe, uniform F = I = W = 1 s: makespan (m + p - 1)(F + I + W)
#   ZB-H1 (Zero Bubble paper, m >= p): m(F + I + W) + (p - 1)(F + I - W)
cli_test("plan 1f1b pp4 m8 text" 0 "1f1b: dp 1 x pp 4, 8 micro-batches, makespan 33 s"
  plan --schedule 1f1b --pp 4 --microbatches 8 --costs 1,1,1)
cli_test("plan zb-h1 pp4 m8 text" 0 "zb-h1: dp 1 x pp 4, 8 micro-batches, makespan 27 s"
  plan --schedule zb-h1 --pp 4 --microbatches 8 --costs 1,1,1)
cli_test("plan gpipe pp2 m2 text" 0 "makespan 9 s"
  plan --schedule gpipe --pp 2 --microbatches 2 --costs 1,1,1)
# 1F1B pp 2, m 2, F=I=W=1 s: stage 1 runs F0 at 1-2, B0 at 2-4, F1 at 4-5, B1 at 5-7, so its
# line starts with one idle column of 1 s after the label.
cli_test("plan 1f1b pp2 text rows" 0 "[(]0,1[)] +[.]+F0 B0 +F1 B1"
  plan --schedule 1f1b --pp 2 --microbatches 2 --costs 1,1,1)
cli_test("plan interleaved text" 0 "interleaved: dp 1 x pp 2 x 2 chunks, 4 micro-batches"
  plan --schedule interleaved --pp 2 --microbatches 4 --interleave 2)
cli_test("plan zb-h2 json" 0 "\"generator\": \"zb-h2\""
  plan --schedule zb-h2 --pp 4 --microbatches 8 --format json)
cli_test("plan json has the format tag" 0 "\"format\": \"recycle.schedule/1\""
  plan --schedule 1f1b --pp 2 --microbatches 2 --dp 2 --format json)
cli_test("plan json comms" 0 "\"0SEND_F0\""
  plan --schedule 1f1b --pp 2 --microbatches 2 --format json --comms)
cli_test("plan json compute only without --comms" 0 "^[^S]*$"
  plan --schedule 1f1b --pp 2 --microbatches 2 --format json)
# Hand-worked PyTorch compute_only grid for 1F1B pp 2, m 2 (every action one step): rank 1 runs
# F0 at step 1, B0 at 2, F1 at 3, B1 at 4; rank 0's B0 needs rank 1's B0 (ends at step 3) and its
# B1 needs rank 1's B1 (ends at step 5), so rank 0 idles at steps 2 and 4.
# (expect.sh joins output lines with " ## ".)
cli_test("plan csv 1f1b pp2" 0 "^0F0,0F1,,0B0,,0B1 ## ,1F0,1B0,1F1,1B1 ## $"
  plan --schedule 1f1b --pp 2 --microbatches 2 --format csv)
cli_test("plan csv-comms 1f1b pp2" 0 "0F0,0SEND_F0"
  plan --schedule 1f1b --pp 2 --microbatches 2 --format csv-comms)
cli_shell_test("plan -o writes a file that --check accepts" 0 "valid"
  "${P} plan --schedule zb-h1 --pp 4 --microbatches 8 --dp 2 --format json --comms -o ${OUT}/zb.json && ${P} plan --check ${OUT}/zb.json")
cli_shell_test("plan csv written then checked" 0 "valid"
  "${P} plan --schedule 1f1b --pp 3 --microbatches 5 --format csv -o ${OUT}/s.csv && ${P} plan --check ${OUT}/s.csv")
cli_test("plan --help has an example" 0 "Examples:.*recycle plan --schedule"
  plan --help)

# V-shaped schedules: stage s holds virtual stages s and 2pp - 1 - s (pp 2: rank 0 has 0 and 3).
# ZB-V's warm-up on stage 0 of 2 is 2(pp - s) - 1 = 3 chunk-0 forwards, then F1 I1 W1.
# On torch 2.8's tokens: stage 0 sends its forwards to stage 1; 1 -> 2 stays on rank 1 (no SEND).
cli_test("plan zb-v is placed in a V" 0
  "^0F0,0SEND_F0,0F1,0SEND_F1,0F2,0SEND_F2,3RECV_F0,3F0,3I0,.* ## 1RECV_F0,1F0,1RECV_F1,2F0,"
  plan --schedule zb-v --pp 2 --microbatches 4 --format csv-comms --torch-version 2.8)
cli_shell_test("plan dualpipe-v written as torch 2.15 CSV, checked as a V" 0
  "valid: file schedule, dp 1 x pp 4, 8 micro-batches, interleave 2 placed in a V"
  "${P} plan --schedule dualpipe-v --pp 4 --microbatches 8 --format csv-comms -o ${OUT}/dpv.csv && ${P} plan --check ${OUT}/dpv.csv")
cli_shell_test("plan --check --placement loop refuses a V file" 2
  "dpv_loop.csv:1: column [0-9]+: '7RECV_F0' is for stage 3 .virtual stage 7 of 4 ranks placed in a loop., but this row is rank 0 .--placement loop. ## $"
  "${P} plan --schedule dualpipe-v --pp 4 --microbatches 8 --format csv-comms -o ${OUT}/dpv_loop.csv 2>/dev/null && ${P} plan --check ${OUT}/dpv_loop.csv --placement loop")
cli_test("plan zb-v --interleave 3 is refused" 2
  "^error: --interleave: zb-v runs two chunks per worker placed in a V[;] give --interleave 2 or leave it out ## $"
  plan --schedule zb-v --pp 4 --microbatches 8 --interleave 3)
cli_test("plan dualpipe-v needs 2pp micro-batches" 2
  "^error: --microbatches: dualpipe-v needs at least 2 x --pp .8. micro-batches, got 7 ## $"
  plan --schedule dualpipe-v --pp 4 --microbatches 7)
cli_test("plan --torch-version outside the list" 2 "--torch-version: 2.9 not in"
  plan --schedule 1f1b --pp 2 --microbatches 2 --format csv-comms --torch-version 2.9)
cli_test("simulate zb-v, F = I = W = 1: pp - 1 idle steps per stage" 0
  "zb-v: dp 1 x pp 4, 8 micro-batches, interleave 2 placed in a V.*iteration time +51 s"
  simulate --schedule zb-v --pp 4 --microbatches 8 --costs 1,1,1)

cli_test("check valid hand-written json" 0 "valid: hand schedule" plan --check ${DATA}/valid_pp2.json)
cli_test("check valid hand-written csv" 0 "valid" plan --check ${DATA}/valid_pp2.csv)
cli_test("check missing micro-batch" 1 "missing.*1F1" plan --check ${DATA}/missing_mb.json)
cli_test("check deadlock" 1 "deadlock" plan --check ${DATA}/cycle.json)
cli_test("check memory limit" 1 "memory" plan --check ${DATA}/valid_pp2.json --memory-limit 1)

# Bad input: one error line naming the flag or file, exit 2, no output file.
cli_test("bad pp 0" 2 "--pp" NO_FILE ${OUT}/bad.json
  plan --schedule 1f1b --pp 0 --microbatches 8 -o ${OUT}/bad.json)
cli_test("bad pp text" 2 "--pp" plan --schedule 1f1b --pp four --microbatches 8)
cli_test("missing microbatches" 2 "--microbatches: required" plan --schedule 1f1b --pp 4)
cli_test("missing schedule" 2 "--schedule: required" plan --pp 4 --microbatches 8)
cli_test("unknown schedule" 2 "--schedule: unknown schedule 'foo'" NO_FILE ${OUT}/bad.json
  plan --schedule foo --pp 4 --microbatches 8 -o ${OUT}/bad.json)
cli_test("interleave on 1f1b" 2 "--interleave" plan --schedule 1f1b --pp 4 --microbatches 8 --interleave 2)
cli_test("interleaved needs chunks" 2 "--interleave" plan --schedule interleaved --pp 4 --microbatches 8)
cli_test("interleaved microbatches not a multiple of pp" 2 "--microbatches: .*multiple of --pp"
  plan --schedule interleaved --pp 4 --microbatches 6 --interleave 2)
cli_test("interleaved fewer microbatches than pp" 2 "--microbatches"
  plan --schedule interleaved --pp 4 --microbatches 2 --interleave 2)
cli_test("costs with two numbers" 2 "--costs: expected three numbers" plan --schedule 1f1b --pp 2 --microbatches 2 --costs 1,2)
cli_test("costs not numbers" 2 "--costs" plan --schedule 1f1b --pp 2 --microbatches 2 --costs a,b,c)
cli_test("costs negative" 2 "--costs" plan --schedule 1f1b --pp 2 --microbatches 2 --costs -1,1,1)
cli_test("costs and profile together" 2 "excludes" plan --schedule 1f1b --pp 2 --microbatches 2 --costs 1,1,1 --profile x.json)
cli_test("profile missing" 2 "nope.json: no such file" plan --schedule 1f1b --pp 2 --microbatches 2 --profile nope.json)
cli_test("memory limit below 1f1b's need" 2 "--memory-limit: 1f1b holds 4 micro-batches" NO_FILE ${OUT}/bad.json
  plan --schedule 1f1b --pp 4 --microbatches 8 --memory-limit 2 -o ${OUT}/bad.json)
cli_test("memory limit 0" 2 "--memory-limit" plan --schedule 1f1b --pp 4 --microbatches 8 --memory-limit 0)
cli_test("bad format" 2 "--format" plan --schedule 1f1b --pp 4 --microbatches 8 --format xml)
cli_test("unknown flag" 2 "--frobnicate" plan --schedule 1f1b --pp 4 --microbatches 8 --frobnicate)
cli_test("output directory missing" 2 "cannot open for writing"
  plan --schedule 1f1b --pp 4 --microbatches 8 -o /nonexistent-recycle-dir/x.json)
cli_test("check and schedule together" 2 "--check" plan --check ${DATA}/valid_pp2.json --schedule 1f1b)
cli_test("check missing file" 2 "nope.json: no such file" plan --check nope.json)
cli_test("check truncated json" 2 "truncated.json:[0-9]+:[0-9]+: malformed JSON" plan --check ${DATA}/truncated.json)
cli_test("check binary garbage" 2 "garbage.bin:1: binary content" plan --check ${DATA}/garbage.bin)

# ReCycle plans. Fault-free 1F1B at pp 8, m 8 with F = I = W = 1 s: (8 + 8 - 1) x 3 = 45 s.
cli_test("plan recycle one failure" 0 "recycle: dp 8 x pp 8, 8 micro-batches, makespan [0-9]+ s"
  plan --schedule recycle --pp 8 --dp 8 --microbatches 8 --fail 3:2)
cli_shell_test("plan recycle json validates" 0 "valid: recycle schedule"
  "${P} plan --schedule recycle --pp 4 --dp 4 --microbatches 8 --fail 0:1,2:3 --format json --comms -o ${OUT}/rc.json && ${P} plan --check ${OUT}/rc.json")
cli_shell_test("plan recycle routes in json" 0 "\"routes\": \\[.*\"owner\": 0, \"stage\": 1"
  "${P} plan --schedule recycle --pp 4 --dp 4 --microbatches 2 --fail 0:1 --format json")
cli_test("plan naive re-route" 0 "1f1b: dp 4 x pp 4" plan --schedule 1f1b --pp 4 --dp 4 --microbatches 8 --fail 1:1)
cli_test("plan recycle infeasible" 1 "infeasible: stage 2 has no live worker"
  plan --schedule recycle --pp 4 --dp 2 --microbatches 8 --fail 0:2,1:2)
cli_test("fail out of range" 2 "--fail: worker 4:0 is outside the layout" plan --schedule recycle --pp 4 --dp 4 --microbatches 8 --fail 4:0)
cli_test("fail duplicate" 2 "--fail: worker 1:1 is listed twice" plan --schedule recycle --pp 4 --dp 4 --microbatches 8 --fail 1:1,1:1)
cli_test("fail syntax" 2 "--fail: expected DP:STAGE" plan --schedule recycle --pp 4 --dp 4 --microbatches 8 --fail 1-1)
cli_test("fail with zb-h1" 2 "--fail: only recycle" plan --schedule zb-h1 --pp 4 --dp 4 --microbatches 8 --fail 1:1)

# ReCycle on other bases (--base). Hand-worked (tests/planner/recycle_bases_test.cpp): a V of two
# chunks, pp 2, dp 2, one micro-batch a pipeline, worker 1:0 failed, F = I = W = 1 s, the barrier:
# (0,0) runs both pipelines' chunks 0 and 3, 12 s of work, idle from 2 to 3 s: 13 s.
cli_test("plan recycle on a zb-v base" 0 "recycle: dp 2 x pp 2 x 2 chunks.*iteration 13 s"
  plan --schedule recycle --base zb-v --pp 2 --dp 2 --microbatches 1 --fail 1:0 --no-stagger)
cli_shell_test("plan recycle on an interleaved base is valid" 0 "valid"
  "${P} plan --schedule recycle --base interleaved --interleave 2 --pp 4 --dp 2 --microbatches 8 --fail 0:1 --format json -o ${OUT}/rb_il.json && ${P} plan --check ${OUT}/rb_il.json")
cli_test("base unknown" 2 "--base: ReCycle plans on 1f1b, interleaved, zb-v, dualpipe-v, 2bw[;] got 'gpipe'"
  plan --schedule recycle --base gpipe --pp 4 --dp 2 --microbatches 8 --fail 0:1)
cli_test("base without recycle" 2 "--base: is the schedule recycle plans on[;] give --schedule recycle"
  plan --schedule 1f1b --base zb-v --pp 4 --dp 2 --microbatches 8)
cli_test("base interleaved needs chunks" 2 "--interleave: the interleaved schedule needs at least 2 chunks"
  plan --schedule recycle --base interleaved --pp 4 --dp 2 --microbatches 8 --fail 0:1)
# A 2bw base (tests/planner/recycle_bases_test.cpp): pp 2, dp 2, 4 micro-batches, worker 1:1
# failed, memory 2: (0,1) does 2 x 4 x 3 = 24 s a period and, with no flush, never waits.
cli_test("plan recycle on a 2bw base" 0 "steady state [(]2bw optimizer, free network[)]: iteration 24 s"
  plan --schedule recycle --base 2bw --pp 2 --dp 2 --microbatches 4 --fail 1:1 --memory-limit 2 --network direct)
# A ZB-V iteration with F = I = W = 1 s per chunk: each stage's 8 x 2 x 3 = 48 s of work and a
# bubble of pp - 1 = 3 s: 51 s; no naive re-route on a V ("-").
cli_test("degradation on a zb-v base" 0 "dp 4 x pp 4 x 2 chunks, 8 micro-batches[;] fault-free zb-v iteration 51 s.*one stage +1 +[0-9.]+ +[0-9.]+ +- "
  degradation --pp 4 --dp 4 --microbatches 8 --costs 1,1,1 --base zb-v --max-failures 1)

# recycle degradation. Hand-worked: fault-free 1F1B at pp 8, m 8, 1 s each: (8 + 8 - 1) x 3 = 45 s;
# the bound with no failure: 8 x 8 x 8 x 3 s of work over 64 workers = 24 s; one failure in stage 4:
# the stage's 8 x 8 x 3 = 192 s over 7 live workers = 27.4286 s.
cli_test("degradation header" 0 "fault-free 1f1b iteration 45 s"
  degradation --pp 8 --dp 8 --microbatches 8 --costs 1,1,1)
cli_test("degradation bounds" 0 "one stage +0 +[0-9.]+ +[0-9.]+ +45 +24 +24 .*one stage +1 +[0-9.]+ +[0-9.]+ +[0-9.]+ +24[.]381 +27[.]4286"
  degradation --pp 8 --dp 8 --microbatches 8 --costs 1,1,1)
cli_test("degradation json" 0 "\"base\": \"1f1b\".*\"fault_free_s\": 45"
  degradation --pp 8 --dp 8 --microbatches 8 --costs 1,1,1 --json)
cli_test("degradation stage out of range" 2 "--stage: expected a stage below --pp"
  degradation --pp 4 --dp 4 --microbatches 8 --stage 4)
cli_test("degradation --help" 0 "Examples:.*recycle degradation" degradation --help)
# Memory: fault-free 1F1B that does not fit is refused as `simulate` refuses it; where it fits,
# the header says the limits ReCycle plans with (what fits, per stage), not the default pp. The
# Llama 3 8B profile on 2 GPUs of 40 GB: floor((80e9 - 2 x params - optimizer state) / one
# micro-batch's activations) = floor((80e9 - 9.08e9 - 27.24e9) / 9.13e9) = 4 on stage 0,
# floor((80e9 - 6.98e9 - 20.94e9) / 9.13e9) = 5 on stages 1 and 2, and
# floor((80e9 - 9.08e9 - 27.24e9) / 13.60e9) = 3 on stage 3 (its output layer's activations).
cli_shell_test("degradation refuses a 1F1B that does not fit, as simulate does" 0
  "^same: error: --profile: 1f1b does not fit worker"
  "${P} profile synth --job ${DATA}/job_llama3_8b.json -o ${OUT}/deg_tight.json && sed -i 's/\"memory_bytes\": [0-9]*/\"memory_bytes\": 28000000000/' ${OUT}/deg_tight.json && a=$(${P} degradation --pp 4 --dp 2 --microbatches 8 --profile ${OUT}/deg_tight.json 2>&1); b=$(${P} simulate --schedule 1f1b --pp 4 --dp 2 --microbatches 8 --profile ${OUT}/deg_tight.json 2>&1); [ \"$a\" = \"$b\" ] && echo \"same: $a\"")
cli_shell_test("degradation says the memory limits ReCycle plans with" 0
  "ReCycle memory limit 4, 5, 5, 3 [(]stages 0[.][.]3: what fits in memory[)] micro-batches.*\"memory_limit\": 3,.*\"memory_limits\": [[]"
  "${P} profile synth --job ${DATA}/job_llama3_8b.json -o ${OUT}/deg_40.json && sed -i 's/\"memory_bytes\": [0-9]*/\"memory_bytes\": 40000000000/' ${OUT}/deg_40.json && ${P} degradation --pp 4 --dp 3 --microbatches 8 --max-failures 1 --profile ${OUT}/deg_40.json && ${P} degradation --pp 4 --dp 3 --microbatches 8 --max-failures 1 --profile ${OUT}/deg_40.json --json")

# recycle plan-table. PP 4 x DP 4 up to 2 failures, counted by hand: no failure 1; one failure 4
# (its stage); two in one pipeline C(4,2) = 6; two in different pipelines, stages s <= s' 4 + 6 = 10.
cli_shell_test("plan-table counts canonical failure sets" 0 "21 plans"
  "${P} plan-table --pp 4 --dp 4 --microbatches 4 --max-failures 2 -o ${OUT}/t.json")
# A bound past what any set can hold (pp x (dp - 1) = 2 here, counted by hand) is written as that
# most, so plan reads the table back; the largest set's lookup equals planning it.
cli_shell_test("plan-table: a bound past every set reads back" 0 "up to 2 workers .*[(]no larger set leaves one[)] ## same ## $"
  "${P} plan-table --pp 2 --dp 2 --microbatches 4 --max-failures 64 -o ${OUT}/t64.json && ${P} plan --schedule recycle --pp 2 --dp 2 --microbatches 4 --fail 0:0,1:1 --plan-table ${OUT}/t64.json --format json > ${OUT}/t64a.json && ${P} plan --schedule recycle --pp 2 --dp 2 --microbatches 4 --fail 0:0,1:1 --format json > ${OUT}/t64b.json && cmp ${OUT}/t64a.json ${OUT}/t64b.json && echo same")
cli_shell_test("plan-table lookup equals direct planning" 0 "^same ## $"
  "${P} -q plan-table --pp 4 --dp 4 --microbatches 4 --max-failures 2 -o ${OUT}/t2.json && ${P} plan --schedule recycle --pp 4 --dp 4 --microbatches 4 --fail 3:1,0:2 --plan-table ${OUT}/t2.json --format json > ${OUT}/a.json && ${P} plan --schedule recycle --pp 4 --dp 4 --microbatches 4 --fail 3:1,0:2 --format json > ${OUT}/b.json && cmp ${OUT}/a.json ${OUT}/b.json && echo same")
cli_shell_test("plan-table on a zb-v base: lookup equals direct planning" 0 "^same ## $"
  "${P} -q plan-table --base zb-v --pp 3 --dp 3 --microbatches 4 --max-failures 2 -o ${OUT}/tv.json && ${P} plan --schedule recycle --base zb-v --pp 3 --dp 3 --microbatches 4 --fail 2:1,0:2 --plan-table ${OUT}/tv.json --format json > ${OUT}/av.json && ${P} plan --schedule recycle --base zb-v --pp 3 --dp 3 --microbatches 4 --fail 2:1,0:2 --format json > ${OUT}/bv.json && cmp ${OUT}/av.json ${OUT}/bv.json && echo same")
cli_test("degradation on a base ReCycle does not plan on" 2 "^error: --base: ReCycle plans on 1f1b, interleaved, zb-v, dualpipe-v, 2bw[;] got 'gpipe'"
  degradation --pp 4 --dp 4 --microbatches 8 --base gpipe)
cli_test("plan recycle on a 2bw base with too few micro-batches" 2 "^error: --microbatches: 2bw needs at least --pp - 1 [(]3[)] micro-batches"
  plan --schedule recycle --base 2bw --pp 4 --dp 2 --microbatches 2 --fail 0:1)
cli_shell_test("plan-table whose base is not one ReCycle plans on" 2 "^error: .*tb[.]json: base: is not a schedule ReCycle plans on"
  "${P} -q plan-table --base zb-v --pp 2 --dp 2 --microbatches 2 --max-failures 1 -o ${OUT}/tb0.json && sed 's/\"base\": \"zb-v\"/\"base\": \"gpipe\"/' ${OUT}/tb0.json > ${OUT}/tb.json && ${P} plan --schedule recycle --base zb-v --pp 2 --dp 2 --microbatches 2 --fail 1:1 --plan-table ${OUT}/tb.json")
cli_shell_test("plan-table on another base" 2 "--plan-table: .* was planned on the zb-v base[;] give --base zb-v"
  "${P} -q plan-table --base zb-v --pp 3 --dp 3 --microbatches 4 --max-failures 1 -o ${OUT}/tw.json; ${P} plan --schedule recycle --pp 3 --dp 3 --microbatches 4 --fail 2:1 --plan-table ${OUT}/tw.json")
cli_shell_test("plan-table lookup beyond its bound" 2 "--plan-table: .* holds no plan for these 3 failures"
  "${P} -q plan-table --pp 4 --dp 4 --microbatches 4 --max-failures 1 -o ${OUT}/t3.json; ${P} plan --schedule recycle --pp 4 --dp 4 --microbatches 4 --fail 3:1,0:2,1:1 --plan-table ${OUT}/t3.json")
cli_shell_test("plan-table for another layout" 2 "--plan-table: .* was made for another layout"
  "${P} -q plan-table --pp 4 --dp 4 --microbatches 4 --max-failures 1 -o ${OUT}/t4.json; ${P} plan --schedule recycle --pp 4 --dp 3 --microbatches 4 --fail 0:1 --plan-table ${OUT}/t4.json")
cli_test("plan-table needs -o" 2 "--output: required" plan-table --pp 4 --dp 4 --microbatches 4)
# dp 128 x pp 16 x 4 = 8,192 chunks a plan (24,576 actions: past the order search), so 2^25 chunks
# of work allow 2^25 / 8,192 = 4,096 plans.
cli_test("plan-table too many sets" 2 "--max-failures: more than 4096 canonical failure sets to plan \\(each about 8192 chunks of work[;] the limit is 33554432"
  plan-table --pp 16 --dp 128 --microbatches 4 --max-failures 8 -o ${OUT}/big.json)

# recycle --exact. PP 2, 1 pipeline, 2 micro-batches, F = I = W = 1 s, worked out by hand: stage 0
# runs F0, F1 by 2 s and waits for micro-batch 0's gradient until 3 s (F0 and I0 on stage 1), then
# has 4 s of I and W left: the optimum is 7 s.
cli_test("plan exact tiny optimum" 0 "exact: dp 1 x pp 2, 2 micro-batches, makespan 7 s"
  plan --schedule recycle --pp 2 --microbatches 2 --costs 1,1,1 --exact)
cli_test("plan exact with another schedule" 2 "--exact: solves recycle plans"
  plan --schedule zb-h1 --pp 2 --microbatches 2 --exact)
cli_test("plan exact zero-cost W" 2 "--costs: --exact needs every F, I and W to take some time"
  plan --schedule recycle --pp 2 --microbatches 2 --costs 1,1,0 --exact)

# Work bounded before it starts. degradation --pp 1 --dp 65536 --microbatches 1: 65,536 chunks a
# plan (past the order search), 2^25 / 65,536 = 512 plans, 3 a row, 2K + 1 rows: K <= 84.
cli_test("degradation refuses more rows than the work limit and says how many fit" 2
  "--max-failures: 131071 rows up to 65535 failures: 393213 plans .*give --max-failures 84 or less"
  degradation --pp 1 --dp 65536 --microbatches 1)
cli_test("degradation --max-failures stops the rows" 0 "one stage +1 .*spread +1 +[0-9]"
  degradation --pp 2 --dp 4 --microbatches 4 --costs 1,1,1 --max-failures 1)
cli_test("plan refuses a schedule past 2^23 chunks" 2
  "--dp x --pp x --interleave x --microbatches: dp 65536 x pp 1024 x interleave 1 x 65536 micro-batches = 4398046511104 chunks"
  plan --schedule 1f1b --pp 1024 --dp 65536 --microbatches 65536)
# Plans from a table go through the validator; the error names the file and the plan.
cli_test("plan-table plans are validated when read" 2
  "table_order.json: plans.1..schedule: invalid schedule: worker .1,0. action 0 '0I0@0': I before its F"
  plan --schedule recycle --pp 2 --dp 2 --microbatches 2 --fail 0:0
  --plan-table ${CMAKE_CURRENT_LIST_DIR}/../hostile/files/table_order.json)

# torch's own schedules, dumped by torch 2.8 and 2.15 (tests/cli/data/torch/README.md), read back:
# the looped ones as loops, ZB-V and DualPipe-V as Vs, and simulated.
set(TORCH ${DATA}/torch)
foreach(version 2.8 2.15)
  foreach(class Interleaved1F1B LoopedBFS InterleavedZeroBubble)
    foreach(form compute_only compute_comms)
      cli_test("torch ${version} ${class} ${form} reads back" 0
        "valid: file schedule, dp 1 x pp 4, 8 micro-batches, interleave 2, 4 live workers"
        plan --check ${TORCH}/${version}/Schedule${class}.${form}.csv)
    endforeach()
  endforeach()
  foreach(form compute_only compute_comms)
    cli_test("torch ${version} ZBVZeroBubble ${form} reads back as a V" 0
      "interleave 2 placed in a V, 4 live workers"
      plan --check ${TORCH}/${version}/ScheduleZBVZeroBubble.${form}.csv)
  endforeach()
  # Unit costs: torch's ZB-V order, lowered by recycle, reaches the bound 6M + pp - 1 = 51
  # (generators_test.cpp). torch's own lowering runs too; its receives share each rank's stream in
  # torch's order, which the runtime model charges for (docs/formats.md).
  cli_test("torch ${version} ZBVZeroBubble compute_only simulates" 0 "iteration time +51 s"
    simulate --schedule-file ${TORCH}/${version}/ScheduleZBVZeroBubble.compute_only.csv --costs 1,1,1)
  cli_test("torch ${version} ZBVZeroBubble compute_comms simulates" 0 "iteration time +[0-9]+ s"
    simulate --schedule-file ${TORCH}/${version}/ScheduleZBVZeroBubble.compute_comms.csv --costs 1,1,1)
  cli_test("torch ${version} GPipe (one stage per rank) reads back" 0 "valid: file schedule"
    plan --check ${TORCH}/${version}/ScheduleGPipe.compute_only.csv)
  # torch's Schedule1F1B._get_pipeline_order (a drawing; the class runs its own loop) numbers the
  # last rank's forwards from 1: it lists 3F8 and never 3F0. The check says so.
  cli_test("torch ${version} Schedule1F1B's drawn order is refused" 1
    "'3F0' missing: pipeline 0's micro-batch 0 never runs F at virtual stage 3"
    plan --check ${TORCH}/${version}/Schedule1F1B.compute_only.csv)
endforeach()
foreach(form compute_only compute_comms)
  cli_test("torch 2.15 DualPipeV ${form} reads back as a V" 0
    "interleave 2 placed in a V, 4 live workers"
    plan --check ${TORCH}/2.15/ScheduleDualPipeV.${form}.csv)
endforeach()
cli_test("torch 2.15 DualPipeV compute_only simulates" 0 "iteration time +51 s"
  simulate --schedule-file ${TORCH}/2.15/ScheduleDualPipeV.compute_only.csv --costs 1,1,1)
cli_test("torch 2.15 DualPipeV compute_comms simulates" 0 "iteration time +[0-9]+ s"
  simulate --schedule-file ${TORCH}/2.15/ScheduleDualPipeV.compute_comms.csv --costs 1,1,1)
# recycle's zb-v and dualpipe-v are torch's orders: the same tokens in the same order on every rank
# (idle cells dropped, torch's OVERLAP_F_B pairs split into their F and B).
set(ORDER "tr -d '\\r' | sed -e 's/(\\([^;]*\\);\\([^)]*\\))OVERLAP_F_B/\\1,\\2/g' -e 's/,,*/,/g' -e 's/^,//' -e 's/,$//'")
cli_shell_test("zb-v is torch 2.15's ScheduleZBVZeroBubble order" 0 "^same ## $"
  "${P} plan --schedule zb-v --pp 4 --microbatches 8 --format csv | ${ORDER} > ${OUT}/zbv_ours.txt && cat ${TORCH}/2.15/ScheduleZBVZeroBubble.compute_only.csv | ${ORDER} > ${OUT}/zbv_torch.txt && diff ${OUT}/zbv_ours.txt ${OUT}/zbv_torch.txt && echo same")
cli_shell_test("dualpipe-v is torch 2.15's ScheduleDualPipeV order" 0 "^same ## $"
  "${P} plan --schedule dualpipe-v --pp 4 --microbatches 8 --format csv | ${ORDER} > ${OUT}/dpv_ours.txt && cat ${TORCH}/2.15/ScheduleDualPipeV.compute_only.csv | ${ORDER} > ${OUT}/dpv_torch.txt && diff ${OUT}/dpv_ours.txt ${OUT}/dpv_torch.txt && echo same")
# The check names the rule once: "layout: the layout's ...", not "layout: layout: ...".
cli_test("plan --check: a layout past the chunk limit" 1
  "schedule_too_many_chunks[.]json: layout: the layout's dp x pp x interleave x microbatches = 4398046511104 "
  plan --check ${CMAKE_CURRENT_SOURCE_DIR}/../hostile/files/schedule_too_many_chunks.json)
cli_test("plan: 2bw with fewer than pp - 1 micro-batches" 2
  "^error: --microbatches: 2bw needs at least --pp - 1 [(]3[)] micro-batches"
  plan --schedule 2bw --pp 4 --microbatches 2 --costs 1,1,1)
cli_test("plan: 2bw to torch's CSV, which runs one weight version" 2
  "^error: --format: torch.distributed.pipelining runs one weight version"
  plan --schedule 2bw --pp 2 --microbatches 4 --costs 1,1,1 --format csv-comms)
cli_test("plan: 2bw in the steady state has no bubble, m (F + B) an iteration" 0
  "steady state [(]2bw optimizer, free network[)]: iteration 24 s"
  plan --schedule 2bw --pp 2 --microbatches 8 --costs 1,1,1)
