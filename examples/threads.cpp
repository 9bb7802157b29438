/*
** threads.cpp -- a multi-threaded C++ example that throws: workers take jobs
** from a shared queue; every fifth job fails validation deep in the call
** chain and throws, and the worker catches it. capprof keeps one call tree
** per thread and stays right when exceptions skip the exit hooks.
*/
#include <capprof/capprof.h>

#include <atomic>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Job { int id; int size; };

int checksum_step(int acc, int x) { return (acc * 31 + x) % 1000003; }

int checksum(const std::vector<int> &data)
{
  int acc = 7;
  for (int x : data) acc = checksum_step(acc, x);
  return acc;
}

void validate(const Job &job)
{
  if (job.id % 5 == 4) throw std::runtime_error("job " + std::to_string(job.id) + " rejected");
}

std::vector<int> load(const Job &job)
{
  validate(job);
  std::vector<int> data(job.size);
  for (int i = 0; i < job.size; i++) data[i] = (job.id * 17 + i) % 97;
  return data;
}

int process(const Job &job) { return checksum(load(job)); }

std::atomic<int> next_job{0};
constexpr int kJobs = 200;

void worker(int index, std::atomic<long> &total, std::atomic<int> &failures)
{
  std::string name = "worker-" + std::to_string(index);
  capprof_set_thread_name(name.c_str());
  for (int id; (id = next_job.fetch_add(1)) < kJobs;) {
    try {
      total += process(Job{id, 100 + id % 50});
    } catch (const std::exception &) {
      failures++;
    }
  }
}

}  // namespace

int main()
{
  std::atomic<long> total{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; i++) threads.emplace_back(worker, i, std::ref(total), std::ref(failures));
  for (auto &t : threads) t.join();
  std::printf("total %ld, %d jobs rejected\n", total.load(), failures.load());
  return 0;
}
