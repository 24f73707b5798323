# Included from tests/CMakeLists.txt: the v1 scheduler API codec (master/scheduler_codec.h).
harvest_test(scheduler_codec_test
  SOURCES scheduler_codec_test.cpp
  LIBS harvest_scheduler_codec)
# The discovered cases are named after their suites (SchedulerCodecDocs.Subscribe, ...); this
# whole-binary entry is what `ctest -R scheduler_codec` selects (about 10 ms).
add_test(NAME scheduler_codec_test COMMAND scheduler_codec_test)

# Mutation fuzzer without libFuzzer (gcc has none): a plain program, run by ctest.
add_executable(scheduler_codec_fuzz scheduler_codec_fuzz.cpp)
target_link_libraries(scheduler_codec_fuzz PRIVATE harvest_scheduler_codec)
add_test(NAME scheduler_codec_fuzz COMMAND scheduler_codec_fuzz 5000)
