# recycle under mpirun (executor/mpi/processes.hpp): process 0 runs the command, the others run
# their share of the workers. Built when MPI is found. On a refusal only the `error:` line is
# kept: mpirun adds its own lines about the failed process.
# Under the sanitizers the leak checker is off here: it reports the MPI library's own allocations.
set(MPI_ENV "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ASAN_OPTIONS=detect_leaks=0")
string(JOIN " " MPI_LAUNCH ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${RECYCLE_MPIEXEC_FLAGS})
set(MPI_RUN "${MPI_ENV} ${MPI_LAUNCH}")
set(ONLY_OURS "out=$(${MPI_RUN} ${P} \"$@\" 2>&1); code=$?; printf '%s\\n' \"$out\" | grep '^error:'; exit $code")

cli_shell_test("validate under mpirun: a worker killed in the other process is found, every micro-batch counted once" 0
  "kill 1:1@2.5: worker \\(1,1\\) stopped.*found silent.*micro-batches processed: 48 \\(each of the 2 x 4 per iteration exactly once\\).*equivalence: .*\\(within 1e-5\\)"
  "${MPI_RUN} ${P} validate --schedule 1f1b --pp 2 --dp 2 --microbatches 4 --width 32 --microbatch-size 4 --iterations 6 --repetitions 3 --kill 1:1@2.5 --heartbeat-ms 25 --missed-beats 4 --check-equivalence")
cli_shell_test("validate under mpirun: ReCycle's re-routed plan across processes" 0
  "\"microbatches_processed\": 36"
  "${MPI_RUN} ${P} validate --schedule recycle --pp 2 --dp 3 --microbatches 4 --fail 1:0 --width 32 --microbatch-size 4 --iterations 3 --repetitions 3 --json")
cli_shell_test("validate under mpirun: a --kill of a worker outside the layout is refused" 2
  "^error: --kill 5:0@1: worker 5:0 is outside the layout"
  "set -- validate --schedule 1f1b --pp 2 --dp 2 --microbatches 4 --kill 5:0@1; ${ONLY_OURS}")
if(RECYCLE_HAVE_CUDA)
  # Each process places its workers on its machine's GPUs; with none visible, one error line.
  cli_shell_test("validate under mpirun: the cuda backend with no GPU visible says so and stops" 2
    "^error: --backend cuda: no GPU is visible"
    "set -- validate --backend cuda --schedule 1f1b --pp 2 --microbatches 4; export CUDA_VISIBLE_DEVICES=; ${ONLY_OURS}")
else()
  cli_shell_test("validate under mpirun: a build without CUDA has no cuda backend" 2
    "^error: --backend: 'cuda': this build has no cuda backend"
    "set -- validate --backend cuda --schedule 1f1b --pp 2 --microbatches 4; ${ONLY_OURS}")
endif()
# tools/validate-gpu.sh's two-process cases, dry run on the cpu backend at small sizes: its 10 rows
# in one process (5 cases, 2 workloads), 3 under mpirun, and the kill's equivalence in each.
cli_shell_test("tools/validate-gpu.sh runs its two-process cases under mpirun (BACKEND=cpu)" 0
  "wrote .*vg_mpi.md ## ## Two processes ## rows 13 equivalent 3"
  "export ${MPI_ENV}; BACKEND=cpu MPIRUN='${MPI_LAUNCH}' RUNS=1 SIZE='--width 32 --microbatch-size 4 --layers-per-stage 1' TSIZE='--width 16 --microbatch-size 2 --layers-per-stage 1' LSIZE= JOBS='${DATA}/job_tiny_gpt.json' RECYCLE=${P} ${CMAKE_SOURCE_DIR}/tools/validate-gpu.sh ${OUT}/vg_mpi.md && grep -o '## Two processes' ${OUT}/vg_mpi.md && echo rows $(grep -cE '%.*[|] (80|160) [|] [^|]* [|]$' ${OUT}/vg_mpi.md) equivalent $(grep -c 'within 1e-5' ${OUT}/vg_mpi.md)")
