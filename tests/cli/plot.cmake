# tools/plot.py: each figure drawn from what the subcommands write, as PNG and SVG, by the Python
# that has Debian's matplotlib (tools/install-deps.sh). A figure counts when its file is a PNG of
# at least 80 % of the size asked for (figsize x 100 dpi; the tight bounding box trims margins)
# and not blank, or an SVG whose text holds the title, both axis labels and every legend entry
# the input names; bad input gets one error line, exit 2, and no file.
find_program(RECYCLE_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT RECYCLE_PYTHON3)
  set(RECYCLE_PYTHON3 python3)
endif()
set(PLOT "${RECYCLE_PYTHON3} ${CMAKE_SOURCE_DIR}/tools/plot.py")
set(PLOT_CHECK "${RECYCLE_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/plot_check.py")

cli_shell_test("plot timeline: a replay's throughput by policy, PNG and SVG" 0
  "png [0-9]+x[0-9]+ ok ## svg ok"
  "${P} replay --job ${CMAKE_SOURCE_DIR}/profiles/jobs/gpt3-175b-a100-1024.json --trace ${CMAKE_SOURCE_DIR}/traces/data/llama3-like.csv --map scale --seed 1 --days 10 --policy recycle,checkpoint,elastic --timeline ${OUT}/plot_t.csv > /dev/null && ${PLOT} timeline ${OUT}/plot_t.csv -o ${OUT}/plot_t.png && ${PLOT} timeline ${OUT}/plot_t.csv -o ${OUT}/plot_t.svg && ${PLOT_CHECK} png ${OUT}/plot_t.png 800 400 && ${PLOT_CHECK} svg ${OUT}/plot_t.svg 'Throughput over the trace, by policy' 'days of training' 'samples per second' recycle checkpoint elastic")
cli_shell_test("plot study: a sweep's metric by policy, with --metric" 0
  "png [0-9]+x[0-9]+ ok ## svg ok"
  "${P} study --job ${CMAKE_SOURCE_DIR}/profiles/jobs/gpt3-175b-a100-1024.json --sweep cluster.spares=0,4 --trace-preset llama3-like --seeds 2 --days 3 --policy recycle,checkpoint -o ${OUT}/plot_s.csv 2> /dev/null && ${PLOT} study ${OUT}/plot_s.csv -o ${OUT}/plot_s.png && ${PLOT} study ${OUT}/plot_s.csv --metric gpu_hours -o ${OUT}/plot_s.svg && ${PLOT_CHECK} png ${OUT}/plot_s.png 640 400 && ${PLOT_CHECK} svg ${OUT}/plot_s.svg 'gpu_hours by cluster.spares, by policy' cluster.spares 'gpu_hours (mean over 2 seeds' recycle checkpoint")
cli_shell_test("plot degradation: ReCycle, naive re-routing and the bound per failure pattern" 0
  "png [0-9]+x[0-9]+ ok ## svg ok"
  "${P} degradation --pp 4 --dp 4 --microbatches 8 --costs 1,1,1 --json > ${OUT}/plot_d.json && ${PLOT} degradation ${OUT}/plot_d.json -o ${OUT}/plot_d.png && ${PLOT} degradation ${OUT}/plot_d.json -o ${OUT}/plot_d.svg && ${PLOT_CHECK} png ${OUT}/plot_d.png 960 360 && ${PLOT_CHECK} svg ${OUT}/plot_d.svg 'Iteration time as workers fail' 'failed workers' 'iteration time / fault-free' ReCycle 'naive re-routing' bound 'failures: one stage' 'failures: spread'")
cli_shell_test("plot gantt: a ReCycle plan's compute per worker from its Chrome trace" 0
  "png [0-9]+x[0-9]+ ok ## svg ok"
  "${P} simulate --schedule recycle --pp 4 --dp 2 --microbatches 8 --fail 1:2 --costs 1,1,1 --trace-iteration 1 --chrome-trace ${OUT}/plot_g.json > /dev/null && ${PLOT} gantt ${OUT}/plot_g.json -o ${OUT}/plot_g.png && ${PLOT} gantt ${OUT}/plot_g.json --title 'ReCycle around 1:2' -o ${OUT}/plot_g.svg && ${PLOT_CHECK} png ${OUT}/plot_g.png 960 300 && ${PLOT_CHECK} svg ${OUT}/plot_g.svg 'ReCycle around 1:2' 'time (s)' worker 'worker (0,0)' 'worker (1,3)' F I W")
cli_shell_test("plot: an unknown figure" 2 "^error: argument kind: invalid choice: 'pie'"
  "${PLOT} pie x.csv -o ${OUT}/never.png")
cli_shell_test("plot: input of another kind names the file and what it expected, writes nothing" 2
  "^error: .*plot_other.json: expected the CSV of `recycle replay --timeline`: no column time_s"
  "echo '{\"rows\": []}' > ${OUT}/plot_other.json && ${PLOT} timeline ${OUT}/plot_other.json -o ${OUT}/plot_never.png; rc=$?; if test -e ${OUT}/plot_never.png; then echo written; exit 1; fi; exit $rc")
cli_shell_test("plot: an output that is neither PNG nor SVG" 2
  "^error: --output: '.*never.pdf': expected a .png or .svg file"
  "${PLOT} gantt ${OUT}/any.json -o ${OUT}/never.pdf")
cli_shell_test("plot: a missing input" 2 "^error: /nonexistent/t.csv: No such file or directory"
  "${PLOT} timeline /nonexistent/t.csv -o ${OUT}/never.png")
cli_shell_test("plot: a timeline with a value that is no number names its line" 2
  "^error: .*plot_bad.csv:3: expected a number, got 'fast'"
  "printf 'time_s,policy,samples_per_s\\n0,recycle,1\\n60,recycle,fast\\n' > ${OUT}/plot_bad.csv && ${PLOT} timeline ${OUT}/plot_bad.csv -o ${OUT}/never.png")
