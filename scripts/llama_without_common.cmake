# Included by CMake right after llama.cpp's project() (the Makefile passes it as CMAKE_PROJECT_llama.cpp_INCLUDE).
# llama-cpp-python forces llama.cpp's common library on (argument parsing, chat templates and JSON for llama.cpp's
# own programs), but the Python package loads only libllama and ggml: compiling common was over half of the build's
# CPU time. Set here, after llama-cpp-python's FORCE and before llama.cpp reads the option, it stays off.
set(LLAMA_BUILD_COMMON OFF CACHE BOOL "llama.cpp common library: not loaded by llama-cpp-python" FORCE)
