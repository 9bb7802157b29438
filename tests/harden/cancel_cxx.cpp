// cancel_cxx.cpp -- a C++ thread cancelled right after pthread_create
// (tests/harden/host.sh, issue 33 case 8): its body makes no cancellation
// point before its first hooked call; a cancellation inside the hook would
// unwind through __fentry__'s frame (std::terminate) or skip the body.
#include <pthread.h>
#include <cstdio>
#include <string>

static volatile int go, ran;
static volatile unsigned sink;

__attribute__((noinline)) static unsigned work(const std::string &s) { return (unsigned)s.size() * 3u; }

extern "C" __attribute__((no_instrument_function)) void *body(void *)
{
  while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE)) {}
  sink += work(std::string("hello"));
  ran = 1;
  return nullptr;
}

int main()
{
  pthread_t th;
  if (pthread_create(&th, nullptr, body, nullptr) != 0) return 2;
  pthread_cancel(th);
  __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
  pthread_join(th, nullptr);
  std::printf("ran %d\n", ran);
  return 0;
}
