// Tests for the fake kube-proxy: a real pod process listening on its pod
// IP, reached through the Service's cluster IP.
#include "tests/fakekube/server/kube_proxy.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include "tests/fakekube/pod_fixtures.h"
#include "tests/fakekube/server/kubelet.h"

namespace edl::fakekube {
namespace {

using testing::Create;
using testing::GetPod;
using testing::WaitUntil;

// Connects to ip:port, sends `request`, reads until EOF.
std::string Exchange(const std::string& ip, int port, const std::string& request) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  inet_pton(AF_INET, ip.c_str(), &addr.sin_addr);
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return "connect failed";
  }
  if (write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return "write failed";
  }
  shutdown(fd, SHUT_WR);
  std::string reply;
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof(buffer))) > 0;) reply.append(buffer, n);
  close(fd);
  return reply;
}

// An echo server on $POD_IP:8080 that prefixes its pod name.
Json EchoPod(const std::string& name) {
  const std::string script =
      "import os, socket\n"
      "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
      "s.bind((os.environ['POD_IP'], 8080)); s.listen(8)\n"
      "while True:\n"
      "    c, _ = s.accept(); data = b''\n"
      "    while True:\n"
      "        b = c.recv(4096)\n"
      "        if not b: break\n"
      "        data += b\n"
      "    c.sendall(os.environ['POD'].encode() + b':' + data); c.close()\n";
  Json pod = testing::ShellPod(name, {"/usr/bin/python3", "-c", script});
  pod["metadata"]["labels"] = {{"app", "echo"}};
  pod["spec"]["nodeName"] = "node-0";
  pod["spec"]["containers"][0]["ports"] = {{{"name", "echo"}, {"containerPort", 8080}}};
  pod["spec"]["containers"][0]["env"] = {
      {{"name", "POD_IP"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "status.podIP"}}}}}},
      {{"name", "POD"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}}};
  return pod;
}

TEST(KubeProxy, ForwardsAConnectionToAReadyPodOfTheService) {
  Store store;
  Kubelet::Options options;
  options.images = {{"shell", "/bin"}};
  Kubelet kubelet(store, options);
  ASSERT_TRUE(kubelet.Start().ok());
  KubeProxy proxy(store);
  ASSERT_TRUE(proxy.Start().ok());

  const std::string cluster_ip = "127.11.0." + std::to_string(10 + getpid() % 200);
  Json service = Create(store, "services",
                        {{"metadata", {{"name", "echo"}}},
                         {"spec",
                          {{"clusterIP", cluster_ip},
                           {"selector", {{"app", "echo"}}},
                           {"ports", {{{"port", 80}, {"targetPort", "echo"}}}}}}});
  EXPECT_EQ(proxy.Endpoint(service, 80), std::nullopt);  // no pod yet

  Create(store, "pods", EchoPod("echo-1"));
  ASSERT_TRUE(WaitUntil([&] { return testing::PodPhaseOf(GetPod(store, "echo-1")) == "Running"; }));
  const std::string listening = cluster_ip + ":80";
  ASSERT_TRUE(WaitUntil([&] {
    auto l = proxy.Listening();
    return std::find(l.begin(), l.end(), listening) != l.end();
  }));
  std::optional<std::string> endpoint = proxy.Endpoint(service, 80);
  ASSERT_TRUE(endpoint.has_value());
  EXPECT_EQ(*endpoint, GetPod(store, "echo-1")["status"]["podIP"].get<std::string>() + ":8080");

  // The pod binds only after it is Running: wait until it answers.
  std::string reply;
  ASSERT_TRUE(WaitUntil([&] {
    reply = Exchange(cluster_ip, 80, "ping");
    return reply == "echo-1:ping";
  })) << reply;

  // A deleted service stops listening.
  ASSERT_TRUE(store.Delete("services", "default", "echo", DeleteRequest{}).ok());
  ASSERT_TRUE(WaitUntil([&] { return proxy.Listening().empty(); }));
  proxy.Stop();
  kubelet.Stop();
}

}  // namespace
}  // namespace edl::fakekube
