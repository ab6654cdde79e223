# RECYCLE_MPI=AUTO builds multi-process runs (executor/mpi/) when an MPI library
# is found; ON requires one; OFF skips it. Sets RECYCLE_HAVE_MPI.
set(RECYCLE_HAVE_MPI OFF)
if(NOT RECYCLE_MPI STREQUAL "OFF")
  set(MPI_CXX_SKIP_MPICXX ON)  # the C API only, not the deprecated C++ bindings
  find_package(MPI QUIET COMPONENTS CXX)
  if(MPI_CXX_FOUND)
    set(RECYCLE_HAVE_MPI ON)
    message(STATUS "recycle: multi-process runs enabled (MPI ${MPI_CXX_VERSION}, ${MPIEXEC_EXECUTABLE})")
  elseif(RECYCLE_MPI STREQUAL "ON")
    message(FATAL_ERROR "RECYCLE_MPI=ON but no MPI library was found")
  else()
    message(STATUS "recycle: multi-process runs disabled (no MPI library found)")
  endif()
endif()
# How the tests start processes: Open MPI refuses more processes than cores and binds each to one
# core unless told otherwise; the tests run a few small processes on a small machine.
set(RECYCLE_MPIEXEC_FLAGS)
if(RECYCLE_HAVE_MPI AND MPIEXEC_EXECUTABLE)
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _mpiexec_version
                  ERROR_QUIET)
  if(_mpiexec_version MATCHES "Open MPI|OpenRTE")
    set(RECYCLE_MPIEXEC_FLAGS --oversubscribe --bind-to none)
  endif()
endif()
