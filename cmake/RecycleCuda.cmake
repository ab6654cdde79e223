# RECYCLE_CUDA=AUTO builds the CUDA backend when nvcc, cuBLAS and NCCL are found; ON requires
# them; OFF skips them. Sets RECYCLE_HAVE_CUDA.
set(RECYCLE_HAVE_CUDA OFF)
if(NOT RECYCLE_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    find_package(CUDAToolkit QUIET)
  endif()
  set(_nccl_hints)
  if(CUDAToolkit_FOUND)
    set(_nccl_hints ${CUDAToolkit_LIBRARY_DIR})
    find_library(NCCL_LIBRARY nccl HINTS ${_nccl_hints})
    find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  endif()
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND AND TARGET CUDA::cublas AND NCCL_LIBRARY AND NCCL_INCLUDE_DIR)
    # A100 and H100 (machine code for each, and PTX for later GPUs) unless told otherwise; set
    # before enable_language, which would otherwise set nvcc's own default (sm_75 for CUDA 13),
    # whose kernels an A100 or H100 would have to compile from PTX at load time, or could not,
    # with a driver older than the toolkit.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    enable_language(CUDA)
    set(RECYCLE_HAVE_CUDA ON)
    if(NOT TARGET NCCL::NCCL)
      add_library(NCCL::NCCL UNKNOWN IMPORTED)
      set_target_properties(NCCL::NCCL PROPERTIES IMPORTED_LOCATION ${NCCL_LIBRARY}
                                                  INTERFACE_INCLUDE_DIRECTORIES ${NCCL_INCLUDE_DIR})
    endif()
    message(STATUS "recycle: CUDA backend enabled (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, NCCL ${NCCL_LIBRARY})")
  elseif(RECYCLE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "RECYCLE_CUDA=ON but nvcc, cuBLAS or NCCL was not found")
  else()
    message(STATUS "recycle: CUDA backend disabled (nvcc, cuBLAS or NCCL not found)")
  endif()
endif()
