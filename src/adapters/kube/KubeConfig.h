// Where the Kubernetes API server is and how to authenticate to it: a kubeconfig file (its
// current context or a named one; KUBECONFIG honoured) or the in-cluster service account.
// Pure data plus loaders; the loaders throw KubeConfigError naming the file and the field.
#pragma once

#include <stdexcept>
#include <string>

#include "adapters/http/HttpClient.h"

namespace rayjournal::kube {

class KubeConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct KubeConfig {
  std::string server;  // https://host:port
  http::TlsConfig tls;
  std::string token;      // static bearer token
  std::string tokenFile;  // re-read on rotation (in-cluster, or kubeconfig tokenFile)
  std::string defaultNamespace = "default";
  std::string source;  // "kubeconfig FILE (context NAME)" or "in-cluster"

  // path empty: $KUBECONFIG, then ~/.kube/config. context empty: current-context.
  static KubeConfig fromFile(const std::string& path, const std::string& context);
  static KubeConfig inCluster();
  // --kubeconfig if given, else in-cluster when KUBERNETES_SERVICE_HOST is set, else the
  // default kubeconfig file.
  static KubeConfig resolve(const std::string& path, const std::string& context);
};

std::string decodeBase64(const std::string& text);

}  // namespace rayjournal::kube
