#include "adapters/kube/KubeConfig.h"

#include <openssl/evp.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace rayjournal::kube {
namespace {

namespace fs = std::filesystem;

std::string readFile(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw KubeConfigError("cannot read " + what + " " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Relative paths in a kubeconfig are relative to the file's directory.
std::string relativeTo(const std::string& file, const std::string& path) {
  if (path.empty() || fs::path(path).is_absolute()) return path;
  return (fs::path(file).parent_path() / path).string();
}

YAML::Node findNamed(const YAML::Node& list, const std::string& name, const std::string& what,
                     const std::string& file) {
  if (list && list.IsSequence()) {
    for (const auto& entry : list) {
      if (entry["name"] && entry["name"].as<std::string>() == name) return entry[what];
    }
  }
  throw KubeConfigError("kubeconfig " + file + ": no " + what + " named '" + name + "'");
}

std::string str(const YAML::Node& node, const char* key) {
  return node && node[key] ? node[key].as<std::string>() : "";
}

// data (base64) wins over a file path, as in kubectl.
std::string pem(const YAML::Node& node, const std::string& key, const std::string& file) {
  std::string data = str(node, (key + "-data").c_str());
  if (!data.empty()) return decodeBase64(data);
  std::string path = str(node, key.c_str());
  return path.empty() ? "" : readFile(relativeTo(file, path), key);
}

// A server the HTTP client could not use is a configuration error (exit 2), not an unreachable
// API server: https:// or http://, a host, an optional numeric port, an optional path.
void requireServerUrl(const std::string& path, const std::string& server) {
  auto bad = [&](const std::string& why) {
    throw KubeConfigError("kubeconfig " + path + ": cluster server '" + server +
                          "' is not a URL (" + why + "); expected https://HOST[:PORT]");
  };
  std::string rest;
  if (server.rfind("https://", 0) == 0) rest = server.substr(8);
  else if (server.rfind("http://", 0) == 0) rest = server.substr(7);
  else bad("no https:// or http://");
  if (server.find_first_of(" \t\r\n") != std::string::npos) bad("it contains white space");
  std::string authority = rest.substr(0, rest.find('/'));
  std::string port;
  if (!authority.empty() && authority.front() == '[') {
    auto close = authority.find(']');
    if (close == std::string::npos || close == 1) bad("unclosed or empty [IPv6] host");
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') bad("junk after the [IPv6] host");
      port = authority.substr(close + 2);
    }
  } else {
    auto colon = authority.find(':');
    if (authority.substr(0, colon).empty()) bad("no host");
    if (colon != std::string::npos) port = authority.substr(colon + 1);
  }
  if (authority.find(':') != std::string::npos && port.empty() && authority.back() == ':')
    bad("empty port");
  if (!port.empty() && (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
                        std::stoi(port) < 1 || std::stoi(port) > 65535))
    bad("port '" + port + "' is not 1-65535");
}

}  // namespace

std::string decodeBase64(const std::string& text) {
  std::string clean;
  for (char ch : text) {
    if (!std::isspace(static_cast<unsigned char>(ch))) clean += ch;
  }
  if (clean.size() % 4 != 0) throw KubeConfigError("invalid base64 data (length)");
  std::string out(clean.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(clean.data()), int(clean.size()));
  if (n < 0) throw KubeConfigError("invalid base64 data");
  size_t padding = 0;
  if (!clean.empty() && clean.back() == '=') ++padding;
  if (clean.size() > 1 && clean[clean.size() - 2] == '=') ++padding;
  out.resize(size_t(n) - padding);
  return out;
}

KubeConfig KubeConfig::fromFile(const std::string& givenPath, const std::string& context) {
  std::string path = givenPath;
  if (path.empty()) {
    const char* env = std::getenv("KUBECONFIG");
    const char* home = std::getenv("HOME");
    if (env && *env) {
      path = std::string(env).substr(0, std::string(env).find(':'));
    } else if (home) {
      path = std::string(home) + "/.kube/config";
    }
  }
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw KubeConfigError("cannot read kubeconfig " + path);
  } catch (const YAML::Exception& e) {
    throw KubeConfigError("kubeconfig " + path + " is not valid YAML: " + e.what());
  }
  try {
    std::string contextName = context.empty() ? str(root, "current-context") : context;
    if (contextName.empty()) throw KubeConfigError("kubeconfig " + path + ": no current-context");
    YAML::Node ctx = findNamed(root["contexts"], contextName, "context", path);
    YAML::Node cluster = findNamed(root["clusters"], str(ctx, "cluster"), "cluster", path);
    YAML::Node user = findNamed(root["users"], str(ctx, "user"), "user", path);
    KubeConfig c;
    c.source = "kubeconfig " + path + " (context " + contextName + ")";
    c.server = str(cluster, "server");
    if (c.server.empty()) throw KubeConfigError("kubeconfig " + path + ": cluster has no server");
    requireServerUrl(path, c.server);
    c.tls.caPem = pem(cluster, "certificate-authority", path);
    c.tls.insecureSkipVerify = str(cluster, "insecure-skip-tls-verify") == "true";
    c.tls.certPem = pem(user, "client-certificate", path);
    c.tls.keyPem = pem(user, "client-key", path);
    c.token = str(user, "token");
    c.tokenFile = relativeTo(path, str(user, "tokenFile"));
    if (!str(ctx, "namespace").empty()) c.defaultNamespace = str(ctx, "namespace");
    return c;
  } catch (const YAML::Exception& e) {
    throw KubeConfigError("kubeconfig " + path + ": " + e.what());
  }
}

KubeConfig KubeConfig::inCluster() {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !port)
    throw KubeConfigError("not in a cluster: KUBERNETES_SERVICE_HOST/PORT are not set");
  const std::string dir = "/var/run/secrets/kubernetes.io/serviceaccount/";
  KubeConfig c;
  c.source = "in-cluster service account";
  std::string h(host);
  c.server = "https://" + (h.find(':') != std::string::npos ? "[" + h + "]" : h) + ":" + port;
  c.tls.caPem = readFile(dir + "ca.crt", "service account CA");
  c.tokenFile = dir + "token";
  if (fs::exists(dir + "namespace")) c.defaultNamespace = readFile(dir + "namespace", "namespace");
  return c;
}

KubeConfig KubeConfig::resolve(const std::string& path, const std::string& context) {
  if (path.empty() && std::getenv("KUBERNETES_SERVICE_HOST")) return inCluster();
  return fromFile(path, context);
}

}  // namespace rayjournal::kube
