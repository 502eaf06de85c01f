// Command criprobe asks a CRI runtime (containerd, CRI-O) over its socket to run a pod sandbox with a
// given runtime handler and prints the gRPC error exactly as the kubelet would receive it. It plays the
// part of `crictl runp --runtime HANDLER`, which Debian does not package.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: criprobe SOCKET HANDLER POD_NAME POD_UID")
		os.Exit(2)
	}
	sock, handler, name, uid := os.Args[1], os.Args[2], os.Args[3], os.Args[4]
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Fprintln(os.Stderr, "dial:", err)
		os.Exit(2)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rt := runtimeapi.NewRuntimeServiceClient(conn)
	ver, err := rt.Version(ctx, &runtimeapi.VersionRequest{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "version:", err)
		os.Exit(2)
	}
	fmt.Fprintf(os.Stderr, "runtime: %s %s\n", ver.RuntimeName, ver.RuntimeVersion)
	_, err = rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{
		Config: &runtimeapi.PodSandboxConfig{
			Metadata:     &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "default", Uid: uid, Attempt: 0},
			LogDirectory: os.TempDir(),
			Linux:        &runtimeapi.LinuxPodSandboxConfig{},
		},
		RuntimeHandler: handler,
	})
	if err == nil {
		fmt.Println("ok")
		return
	}
	// The kubelet records this text verbatim after "Failed to create pod sandbox: ".
	fmt.Println(err.Error())
	os.Exit(1)
}
