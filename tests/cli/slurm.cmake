# tools/slurm/study.sbatch under a real Slurm on localhost (tools/slurm/test-local.sh: munged,
# slurmctld and slurmd from Debian's packages with a generated configuration, as root): a 4-task
# job array of `recycle study --shard I/4`, merged, byte for byte the unsharded study. Skipped
# (exit 77) where Slurm is not installed or the tests do not run as root.
add_test(NAME "slurm: study.sbatch as a 4-task job array merges to the unsharded study"
         COMMAND ${CMAKE_SOURCE_DIR}/tools/slurm/test-local.sh $<TARGET_FILE:recycle>)
set_tests_properties("slurm: study.sbatch as a 4-task job array merges to the unsharded study"
                     PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
