# The notebooks (notebooks/*.ipynb), executed top to bottom by the Python that has Debian's
# Jupyter packages (tools/install-deps.sh), on this build's recycle, each with its own scratch
# folder in the build tree; a cell that raises fails the test and names itself.
file(GLOB RECYCLE_NOTEBOOKS ${CMAKE_SOURCE_DIR}/notebooks/*.ipynb)
foreach(notebook ${RECYCLE_NOTEBOOKS})
  get_filename_component(name ${notebook} NAME)
  add_test(NAME "notebooks: ${name} runs top to bottom"
           COMMAND ${RECYCLE_PYTHON3} ${CMAKE_SOURCE_DIR}/notebooks/run.py ${notebook})
  set_tests_properties("notebooks: ${name} runs top to bottom" PROPERTIES
                       ENVIRONMENT "RECYCLE=$<TARGET_FILE:recycle>;RECYCLE_SCRATCH=${OUT}/nb-${name}")
endforeach()
# Without ../shared the trace notebook replays the shipped trace instead of failing.
add_test(NAME "notebooks: trace_replay.ipynb falls back to the shipped trace without ../shared"
         COMMAND ${RECYCLE_PYTHON3} ${CMAKE_SOURCE_DIR}/notebooks/run.py
                 ${CMAKE_SOURCE_DIR}/notebooks/trace_replay.ipynb)
set_tests_properties("notebooks: trace_replay.ipynb falls back to the shipped trace without ../shared"
                     PROPERTIES ENVIRONMENT "RECYCLE=$<TARGET_FILE:recycle>;RECYCLE_SHARED=/nonexistent;RECYCLE_SCRATCH=${OUT}/nb-fallback")
