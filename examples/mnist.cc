// Training: tinygrad's examples/beautiful_mnist.py in C++, on Fashion-MNIST from Debian's
// dataset-fashion-mnist package (read from /usr/share/datasets/fashion-mnist, no network).
//
// The same model (4 convolutions, 2 BatchNorms, a Linear), Adam with tinygrad's defaults, batches of 512
// sampled with replacement, 70 steps, test accuracy every 10 steps and at the end. The training step is a
// TinyJit: the first call runs it, the second captures its kernels, the others replay them with the new
// batch. One difference from tinygrad: the batch is gathered on the host and handed to the step as its
// input, where tinygrad's step draws the indices with Tensor.randint and gathers with `X_train[samples]`, a
// one-hot reduction over all 60,000 images (24 billion multiply-adds a step, most of its 8.4 s).
//
//   ./bazelw run -c opt //examples:mnist                         # 70 steps, as tinygrad
//   ./bazelw run -c opt //examples:mnist -- --steps=200 --target_accuracy=85
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "examples/mnist_model.h"
#include "nn/datasets.h"
#include "nn/layers.h"
#include "nn/optim.h"
#include "nn/safetensors.h"
#include "nn/state.h"
#include "runtime/collective.h"
#include "tensor/jit.h"
#include "tensor/tensor.h"
#include "uop/status_macros.h"
#include "uop/util.h"

ABSL_FLAG(int, steps, 70, "training steps");
ABSL_FLAG(int, batch, 512, "images per step (tinygrad's BS)");
ABSL_FLAG(int64_t, seed, 42, "seed of the weights' initialisation and of the batch sampling");
ABSL_FLAG(std::string, data_dir, uopc::nn::kFashionMnistDir, "directory of the four gzipped IDX files");
ABSL_FLAG(int, eval_every, 10, "test accuracy every this many steps (0: only at the end)");
ABSL_FLAG(int, test_images, 10000, "test images to evaluate (the first N)");
ABSL_FLAG(int, eval_batch, 2000, "test images per evaluation batch");
ABSL_FLAG(std::string, device, "CPU", "device to train on (CPU, LLVM, OPENCL, INTERP, ...)");
ABSL_FLAG(std::string, devices, "",
          "train data-parallel on these devices, comma-separated (CPU:0,CPU:1): the weights on each, each "
          "batch sharded along its images, the gradients all-reduced (tinygrad's shard)");
ABSL_FLAG(
    bool, mpi, false,
    "train data-parallel across the processes of `mpirun -np N` (//runtime:mpi): each process its share of "
    "each batch, BatchNorm's statistics and the gradients all-reduced; rank 0 prints and writes the "
    "checkpoint");
ABSL_FLAG(std::string, checkpoint, "",
          "after training, write the model's state here (safetensors; rank 0 only)");
ABSL_FLAG(double, target_accuracy, 0, "exit with status 1 when the final test accuracy (%) is below this");

namespace uopc {
namespace {

using Clock = std::chrono::steady_clock;

// Rows `indices` of images (N, 1, 28, 28) and labels, as uint8 tensors.
std::pair<Tensor, Tensor> Gather(const nn::ByteArray& images, const nn::ByteArray& labels,
                                 const std::vector<int64_t>& indices) {
  constexpr int64_t kPixels = 28 * 28;
  std::vector<uint8_t> x(indices.size() * kPixels), y(indices.size());
  for (size_t i = 0; i < indices.size(); ++i) {
    std::copy_n(images.data.begin() + indices[i] * kPixels, kPixels, x.begin() + i * kPixels);
    y[i] = labels.data[indices[i]];
  }
  const int64_t n = static_cast<int64_t>(indices.size());
  return {Tensor::FromBytes(std::move(x), {n, 1, 28, 28}, dtypes::kUInt8),
          Tensor::FromBytes(std::move(y), {n}, dtypes::kUInt8)};
}

absl::Status Train() {
  const int steps = absl::GetFlag(FLAGS_steps);
  const int batch = absl::GetFlag(FLAGS_batch);
  const int eval_every = absl::GetFlag(FLAGS_eval_every);
  const int eval_batch = absl::GetFlag(FLAGS_eval_batch);
  if (steps < 1 || batch < 1 || eval_batch < 1) {
    return absl::InvalidArgumentError("--steps, --batch and --eval_batch must be positive");
  }
  // Across processes: this one's rank among them; only rank 0 prints and writes files.
  Communicator* world = nullptr;
  int rank = 0, processes = 1;
  if (absl::GetFlag(FLAGS_mpi)) {
    UOPC_ASSIGN_OR_RETURN(world, GetCommunicator("MPI"));
    rank = world->rank();
    processes = world->size();
    if (batch % processes != 0 || eval_batch % processes != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--batch and --eval_batch must be multiples of the ", processes, " processes"));
    }
    if (!absl::GetFlag(FLAGS_devices).empty()) {
      return absl::InvalidArgumentError("--mpi with --devices is not supported");
    }
  }
  auto say = [&](const std::string& text) {
    if (rank != 0) return;
    std::printf("%s\n", text.c_str());
    std::fflush(stdout);
  };
  // This process's rows of a batch: all of them, or its consecutive share.
  auto share = [&](const std::vector<int64_t>& rows) {
    const size_t per = rows.size() / processes, extra = rows.size() % processes;
    const size_t first = rank * per + std::min<size_t>(rank, extra);
    return std::vector<int64_t>(rows.begin() + first, rows.begin() + first + per + (rank < extra ? 1 : 0));
  };
  const auto start = Clock::now();
  UOPC_ASSIGN_OR_RETURN(nn::MnistData data, nn::LoadMnist(absl::GetFlag(FLAGS_data_dir)));
  const int64_t train_count = data.train_images.shape[0];
  const int64_t test_count = std::min<int64_t>(absl::GetFlag(FLAGS_test_images), data.test_images.shape[0]);
  say(absl::StrFormat("loaded %lld training and %lld test images in %.2f s",
                      static_cast<long long>(train_count), static_cast<long long>(data.test_images.shape[0]),
                      SecondsSince(start)));

  Tensor::SetDefaultDevice(absl::GetFlag(FLAGS_device));
  Tensor::ManualSeed(absl::GetFlag(FLAGS_seed));
  MnistModel model(world != nullptr ? "MPI" : "");
  // Data-parallel: every weight (and BatchNorm's statistics) on every device; each batch split among them.
  const std::string devices = absl::GetFlag(FLAGS_devices);
  const std::vector<std::string> device_list = absl::StrSplit(devices, ',', absl::SkipEmpty());
  if (!devices.empty()) {
    for (const Tensor& t : nn::GetParameters(model)) UOPC_RETURN_IF_ERROR(t.To_(devices).status());
  }
  auto on_devices = [&](std::pair<Tensor, Tensor> xy) {
    if (device_list.size() > 1) {
      xy.first.Shard_(device_list, 0);
      xy.second.Shard_(device_list, 0);
    }
    return xy;
  };
  // Realized before the first step: until then BatchNorm's weights are the constant ones(32) and ones(64),
  // one node with every other such constant, and a gradient with respect to them would also flow into the
  // loss's ones over a batch of 32 or 64 images (docs/nn.md; tinygrad's beautiful_mnist does that).
  UOPC_RETURN_IF_ERROR(Tensor::RealizeAll(nn::GetParameters(model)));
  nn::Adam opt(nn::GetParameters(model));
  UOPC_RETURN_IF_ERROR(opt.status());

  TinyJit train_step([&](absl::Span<const Tensor> in) -> absl::StatusOr<std::vector<Tensor>> {
    Tensor::Train training;
    opt.ZeroGrad();
    Tensor loss = model(in[0]).SparseCategoricalCrossentropy(in[1]);
    UOPC_RETURN_IF_ERROR(loss.Backward());
    if (world != nullptr) {
      // The mean over the global batch: every process's gradient of its mean, summed, over the processes.
      for (const Tensor& p : nn::GetParameters(model)) {
        if (std::optional<Tensor> g = p.Grad()) p.SetGrad(g->AllReduce() * (1.0 / processes));
      }
      loss = loss.AllReduce() * (1.0 / processes);
    }
    UOPC_ASSIGN_OR_RETURN(std::vector<Tensor> updates, opt.ScheduleStep());
    updates.insert(updates.begin(), loss);
    UOPC_RETURN_IF_ERROR(Tensor::RealizeAll(updates));
    return std::vector<Tensor>{loss};
  });
  // The count of right answers in a batch of test images, in inference mode (BatchNorm's running statistics).
  auto correct_in = [&](absl::Span<const Tensor> in) -> absl::StatusOr<std::vector<Tensor>> {
    Tensor::Train inference(false);
    Tensor correct = model(in[0]).Argmax(1).Eq(in[1]).Sum();
    return std::vector<Tensor>{world != nullptr ? correct.AllReduce() : correct};
  };
  TinyJit test_batch(correct_in);
  auto test_accuracy = [&]() -> absl::StatusOr<double> {
    int64_t correct = 0;
    for (int64_t first = 0; first < test_count; first += eval_batch) {
      std::vector<int64_t> rows;
      for (int64_t i = first; i < std::min<int64_t>(first + eval_batch, test_count); ++i) rows.push_back(i);
      const bool full = static_cast<int64_t>(rows.size()) == eval_batch;
      auto [x, y] = on_devices(Gather(data.test_images, data.test_labels, share(rows)));
      // A last batch of another size runs without the jit.
      std::vector<Tensor> in = {x, y};
      absl::StatusOr<std::vector<Tensor>> out = full ? test_batch(in) : correct_in(in);
      UOPC_RETURN_IF_ERROR(out.status());
      UOPC_ASSIGN_OR_RETURN(int32_t n, (*out)[0].Item<int32_t>());
      correct += n;
    }
    return 100.0 * static_cast<double>(correct) / static_cast<double>(test_count);
  };

  std::mt19937_64 sampler(static_cast<uint64_t>(absl::GetFlag(FLAGS_seed)));
  std::uniform_int_distribution<int64_t> pick(0, train_count - 1);
  double accuracy = -1, first_steps_seconds = 0, replay_seconds = 0, replay_host_seconds = 0;
  int replayed = 0;
  const auto train_start = Clock::now();
  for (int step = 1; step <= steps; ++step) {
    const auto step_start = Clock::now();
    std::vector<int64_t> rows(batch);
    for (int64_t& r : rows) r = pick(sampler);
    auto [x, y] = on_devices(Gather(data.train_images, data.train_labels, share(rows)));
    const bool replay = train_step.captured();
    const auto call_start = Clock::now();
    UOPC_ASSIGN_OR_RETURN(std::vector<Tensor> out, train_step({x, y}));
    const double call_seconds = SecondsSince(call_start);
    UOPC_ASSIGN_OR_RETURN(float loss, out[0].Item<float>());
    const double seconds = SecondsSince(step_start);
    if (replay) {
      replay_seconds += seconds;
      // The replay's own overhead: the call (upload of the batch, buffer lookups, launches) less the kernels.
      replay_host_seconds += call_seconds - train_step.last_kernel_seconds();
      ++replayed;
    } else {
      first_steps_seconds += seconds;
    }
    std::string line = absl::StrFormat("step %3d/%d  loss %6.3f  %6.2f steps/s  %7.2f s", step, steps, loss,
                                       1.0 / seconds, SecondsSince(train_start));
    if (eval_every > 0 && step % eval_every == 0 && step != steps) {
      UOPC_ASSIGN_OR_RETURN(accuracy, test_accuracy());
      line += absl::StrFormat("  test accuracy %5.2f%%", accuracy);
    }
    say(line);
  }
  const double train_seconds = SecondsSince(train_start);
  UOPC_ASSIGN_OR_RETURN(accuracy, test_accuracy());
  say(absl::StrFormat("test accuracy %.2f%% on %lld images", accuracy, static_cast<long long>(test_count)));
  // A GPU's replayed kernels are not timed one by one (that would wait for each), so there the host's part
  // of a step is not known.
  const std::string host_part = replayed && train_step.last_kernel_seconds() > 0
                                    ? absl::StrFormat(", of which %.2f ms the replay's host overhead",
                                                      1e3 * replay_host_seconds / replayed)
                                    : "";
  say(absl::StrFormat(
      "%d steps in %.2f s (first %d: %.2f s, run and capture; then %.2f ms a step%s); %.2f s in all", steps,
      train_seconds, steps - replayed, first_steps_seconds, replayed ? 1e3 * replay_seconds / replayed : 0.0,
      host_part.c_str(), SecondsSince(start)));
  say(absl::StrFormat("the step replays %zu kernels", train_step.captured_runs().kernel_count()));
  if (const std::string path = absl::GetFlag(FLAGS_checkpoint); !path.empty() && rank == 0) {
    UOPC_RETURN_IF_ERROR(nn::SafeSave(nn::GetStateDict(model), path));
    say("wrote " + path);
  }
  if (accuracy < absl::GetFlag(FLAGS_target_accuracy)) {
    return absl::FailedPreconditionError(absl::StrFormat("test accuracy %.2f%% is below the target %.2f%%",
                                                         accuracy, absl::GetFlag(FLAGS_target_accuracy)));
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace uopc

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::Status status = uopc::Train();
  if (!status.ok()) {
    std::fprintf(stderr, "error: %s\n", status.ToString().c_str());
    // Across processes, the others must not wait for this one: end them all.
    if (absl::GetFlag(FLAGS_mpi)) {
      if (absl::StatusOr<uopc::Communicator*> world = uopc::GetCommunicator("MPI"); world.ok())
        (*world)->Abort(1);
    }
    return 1;
  }
  return 0;
}
