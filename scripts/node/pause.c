/* The pod sandbox's process (what registry.k8s.io/pause runs): holds the pod's namespaces, reaps
 * the zombies of a shared process namespace, and exits on SIGINT or SIGTERM. No registry is
 * reachable here, so the node's sandbox image is built from this file (scripts/node/build-images.sh). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void quit(int sig) {
  (void)sig;
  _exit(0);
}

static void reap(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(void) {
  if (getpid() != 1) fprintf(stderr, "pause: not running as PID 1\n");
  struct sigaction stop = {.sa_handler = quit};
  struct sigaction child = {.sa_handler = reap, .sa_flags = SA_NOCLDSTOP};
  if (sigaction(SIGINT, &stop, NULL) || sigaction(SIGTERM, &stop, NULL) ||
      sigaction(SIGCHLD, &child, NULL))
    return 1;
  for (;;) pause();
}
