// Command criprobe asks a CRI runtime (containerd, CRI-O) over its socket for what the kubelet asks of it, and
// prints the gRPC error exactly as the kubelet would receive it. It plays the part of `crictl runp` and
// `crictl run`, which Debian does not package.
//
//	criprobe version SOCKET
//	    Prints the runtime's name and version ("containerd v2.4.2", "cri-o 1.34.0").
//	criprobe sandbox SOCKET HANDLER POD_NAME POD_UID
//	    RunPodSandbox with the runtime handler HANDLER (a Pod's RuntimeClass handler).
//	criprobe container SOCKET HANDLER IMAGE [NAME=VALUE | cdi:DEVICE]...
//	    A host-network sandbox with HANDLER, then CreateContainer and StartContainer of IMAGE's /pause with
//	    those environment variables and CDI devices (as the kubelet passes a device plugin's answer), then
//	    the sandbox is removed again.
//
// It prints the error of the first call that fails (exit 1), or "ok" (exit 0); on stderr, the runtime's name
// and version ("runtime: …") and the call that failed ("call: …").
package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

const usage = `usage: criprobe version SOCKET
       criprobe sandbox SOCKET HANDLER POD_NAME POD_UID
       criprobe container SOCKET HANDLER IMAGE [NAME=VALUE | cdi:DEVICE]...`

func main() {
	args := os.Args[1:]
	bad := len(args) < 2
	if !bad {
		switch args[0] {
		case "version":
			bad = len(args) != 2
		case "sandbox":
			bad = len(args) != 5
		case "container":
			bad = len(args) < 4
		default:
			bad = true
		}
	}
	if bad {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	conn, err := grpc.NewClient("unix://"+args[1], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Fprintln(os.Stderr, "dial:", err)
		os.Exit(2)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rt := runtimeapi.NewRuntimeServiceClient(conn)
	ver, err := rt.Version(ctx, &runtimeapi.VersionRequest{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "version:", err)
		os.Exit(2)
	}
	if args[0] == "version" {
		fmt.Println(ver.RuntimeName, ver.RuntimeVersion)
		return
	}
	fmt.Fprintf(os.Stderr, "runtime: %s %s\n", ver.RuntimeName, ver.RuntimeVersion)
	if args[0] == "sandbox" {
		err = sandbox(ctx, rt, args[2], args[3], args[4])
	} else {
		err = container(ctx, rt, args[2], args[3], args[4:])
	}
	if err == nil {
		fmt.Println("ok")
		return
	}
	// The kubelet records this text's description verbatim: after "Failed to create pod sandbox: " (the whole
	// error) for a sandbox, after "Error: " for a container.
	fmt.Println(err.Error())
	os.Exit(1)
}

func sandbox(ctx context.Context, rt runtimeapi.RuntimeServiceClient, handler, name, uid string) error {
	_, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{
		Config: &runtimeapi.PodSandboxConfig{
			Metadata:     &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "default", Uid: uid, Attempt: 0},
			LogDirectory: os.TempDir(),
			// The kubelet's default: each container its own PID namespace (POD only with shareProcessNamespace).
			Linux: &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
				NamespaceOptions: &runtimeapi.NamespaceOption{Pid: runtimeapi.NamespaceMode_CONTAINER},
			}},
		},
		RuntimeHandler: handler,
	})
	return called("RunPodSandbox", err)
}

func container(ctx context.Context, rt runtimeapi.RuntimeServiceClient, handler, image string, extra []string) error {
	var envs []*runtimeapi.KeyValue
	var cdi []*runtimeapi.CDIDevice
	for _, a := range extra {
		if dev, ok := strings.CutPrefix(a, "cdi:"); ok {
			cdi = append(cdi, &runtimeapi.CDIDevice{Name: dev})
			continue
		}
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			fmt.Fprintln(os.Stderr, usage)
			os.Exit(2)
		}
		envs = append(envs, &runtimeapi.KeyValue{Key: k, Value: []byte(v)})
	}
	logs, err := os.MkdirTemp("", "criprobe")
	if err != nil {
		return err
	}
	defer os.RemoveAll(logs)
	sbConfig := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: "gpu-probe", Namespace: "default", Uid: fmt.Sprint(time.Now().UnixNano())},
		LogDirectory: logs,
		Linux: &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			// The host's network: no CNI runs here. Each container its own PID namespace, as the kubelet
			// asks by default (CRI-O then runs no infra container).
			NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE, Pid: runtimeapi.NamespaceMode_CONTAINER},
		}},
	}
	sb, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sbConfig, RuntimeHandler: handler})
	if err != nil {
		return called("RunPodSandbox", err)
	}
	defer func() {
		bg := context.Background()
		rt.StopPodSandbox(bg, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.PodSandboxId})
		rt.RemovePodSandbox(bg, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.PodSandboxId})
	}()
	c, err := rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
		PodSandboxId:  sb.PodSandboxId,
		SandboxConfig: sbConfig,
		Config: &runtimeapi.ContainerConfig{
			Metadata:   &runtimeapi.ContainerMetadata{Name: "cuda"},
			Image:      &runtimeapi.ImageSpec{Image: image, UserSpecifiedImage: image},
			Command:    []string{"/pause"},
			Envs:       envs,
			CDIDevices: cdi,
			LogPath:    "cuda.log",
			// The kubelet repeats the Pod's namespace modes for each container.
			Linux: &runtimeapi.LinuxContainerConfig{SecurityContext: &runtimeapi.LinuxContainerSecurityContext{
				NamespaceOptions: sbConfig.Linux.SecurityContext.NamespaceOptions,
			}},
		},
	})
	if err != nil {
		return called("CreateContainer", err)
	}
	_, err = rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: c.ContainerId})
	return called("StartContainer", err)
}

func called(call string, err error) error {
	if err != nil {
		fmt.Fprintln(os.Stderr, "call:", call)
	}
	return err
}
