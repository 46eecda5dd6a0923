// OpenMP's wait policy, chosen from the CPUs an edl process may use. libgomp
// lets a thread that runs out of work spin 300,000 times before it sleeps:
// fastest on cores of one's own, but under a cgroup CPU quota (a Kubernetes
// pod's CPU limit) the spins spend the quota that the thread the team waits
// for needs, and the process is throttled. libgomp reads GOMP_SPINCOUNT once,
// when it loads, before main(): so in a cgroup with a CPU quota, when neither
// GOMP_SPINCOUNT nor OMP_WAIT_POLICY is set, edl sets
// GOMP_SPINCOUNT=kOpenMpSpinCount and executes itself again
// (/proc/self/exe, the same arguments), once: about 7 ms. Busy neighbours
// without a quota are left to the team size (roles/thread_tuner.h): short
// spins helped there too (local MLP beside two busy processes, median 64.7k
// against 52.9k samples/s) but looked slower on an idle machine (medians
// ~107k against ~150k, on a noisy VM), so they are kept where spinning
// spends a quota. A user's own setting wins.
#pragma once

namespace edl::cmd {

// The count a local job's PS and workers get too (roles/job/process_options.h
// ChildEnv).
inline constexpr const char* kOpenMpSpinCount = "1000";

// Returns only when nothing is to be done or the exec failed (edl then runs
// with libgomp's default).
void ExecWithShortOpenMpSpins(char** argv);

}  // namespace edl::cmd
