//! Hermetic API tests: kube-rs over a tower-test mock apiserver that answers by URL. They cover what a real
//! apiserver rarely does on demand: malformed payloads, null where a list is expected, 429 and 5xx on
//! optional reads (gaps), pagination, and a failing read of the Pod itself (an error).

use std::collections::BTreeMap;

use gpuwhy::collect::{TargetSpec, collect};
use http::{Request, Response, StatusCode};
use kube::client::Body;
use serde_json::{Value, json};

type Routes = BTreeMap<&'static str, (u16, Value)>;

/// Serves `routes` by path (query string ignored, except `continue=` which selects `path#2`); any other
/// path is a 404 Status. Stops after `max` requests or 5 s, whichever is first.
fn mock(routes: Routes) -> kube::Client {
    let (svc, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    tokio::spawn(async move {
        for _ in 0..64 {
            let Ok(Some((req, send))) =
                tokio::time::timeout(std::time::Duration::from_secs(5), handle.next_request())
                    .await
            else {
                return;
            };
            let path = req.uri().path().to_string();
            let query = req.uri().query().unwrap_or("").to_string();
            assert_eq!(
                req.method(),
                http::Method::GET,
                "gpuwhy only reads: {} {path}",
                req.method()
            );
            // A list's first page is asked for from the apiserver's cache, except events (their watch cache is off by
            // default); a continued page names no resourceVersion, which the apiserver refuses beside `continue`.
            let cached = query.split('&').any(|kv| kv == "resourceVersion=0");
            if query.contains("continue=") || path.ends_with("/events") {
                assert!(!query.contains("resourceVersion="), "{path}?{query}");
            } else if query.contains("limit=") {
                assert!(cached, "a list not from the cache: {path}?{query}");
            }
            let key = if query.contains("continue=") {
                format!("{path}#2")
            } else {
                path.clone()
            };
            let (code, body) = routes
                .iter()
                .find(|(k, _)| **k == key)
                .map(|(_, v)| v.clone())
                .unwrap_or((404, json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404, "message": format!("{path} not found")})));
            let bytes = match body {
                Value::String(s) => s.into_bytes(),
                v => serde_json::to_vec(&v).unwrap(),
            };
            send.send_response(
                Response::builder()
                    .status(StatusCode::from_u16(code).unwrap())
                    .body(Body::from(bytes))
                    .unwrap(),
            );
        }
    });
    kube::Client::new(svc, "default")
}

fn status(code: u16, reason: &str) -> (u16, Value) {
    (
        code,
        json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason, "code": code, "message": format!("{reason} from the mock")}),
    )
}

fn pending_gpu_pod() -> Value {
    json!({"kind": "Pod", "apiVersion": "v1",
        "metadata": {"name": "p", "namespace": "ml", "uid": "u-1"},
        "spec": {"containers": [{"name": "cuda", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]},
        "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
            "message": "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."}]}})
}

fn node(name: &str, gpus: &str, labels: Value) -> Value {
    json!({"metadata": {"name": name, "labels": labels}, "spec": {}, "status": {"allocatable": {"cpu": "8", "nvidia.com/gpu": gpus, "pods": "110"}}})
}

#[tokio::test]
async fn null_lists_pagination_and_gaps_from_429_and_5xx() {
    let mut routes = Routes::new();
    routes.insert("/api/v1/namespaces/ml/pods/p", (200, pending_gpu_pod()));
    // null where a list is expected
    routes.insert(
        "/api/v1/namespaces/ml/events",
        (
            200,
            json!({"kind": "EventList", "items": null, "metadata": {}}),
        ),
    );
    routes.insert(
        "/apis/events.k8s.io/v1/namespaces/ml/events",
        status(429, "TooManyRequests"),
    );
    // two pages of nodes
    routes.insert("/api/v1/nodes", (200, json!({"kind": "NodeList", "metadata": {"continue": "tok"}, "items": [node("gpu-a", "0", json!({"nvidia.com/gpu.present": "true"}))]})));
    routes.insert(
        "/api/v1/nodes#2",
        (
            200,
            json!({"kind": "NodeList", "metadata": {}, "items": [node("cpu-b", "0", json!({}))]}),
        ),
    );
    routes.insert("/api/v1/pods", status(503, "ServiceUnavailable"));
    let client = mock(routes);
    let evs = collect(&client, "ml", &TargetSpec::Pod("p".into()))
        .await
        .expect("optional failures are gaps");
    let ev = &evs[0];
    let nodes = ev.nodes.as_ref().expect("nodes read across two pages");
    assert_eq!(
        nodes.iter().map(|n| n.name.as_str()).collect::<Vec<_>>(),
        vec!["gpu-a", "cpu-b"]
    );
    let checks: Vec<&str> = ev.gaps.iter().map(|g| g.check.as_str()).collect();
    assert!(
        checks.contains(&"device-plugin pods") && checks.contains(&"pods holding the resource"),
        "{checks:?}"
    );
    assert!(
        ev.gaps.iter().any(|g| g.reason.contains("503")),
        "{:?}",
        ev.gaps
    );
    // The diagnosis still stands, and the facts decide: GPU hardware advertising nothing is the device plugin.
    let d = gpuwhy::diagnose::diagnose(ev);
    assert_eq!(d.primary.as_str(), "device-plugin", "{d:#?}");
    assert_eq!(d.causes[0].details["node"], "gpu-a");
}

/// One list of the bound Pods finds both the GPU holders and the device-plugin Pods (by their labels).
#[tokio::test]
async fn one_pod_list_names_the_holders_and_the_device_plugin() {
    let mut routes = Routes::new();
    routes.insert("/api/v1/namespaces/ml/pods/p", (200, pending_gpu_pod()));
    routes.insert(
        "/api/v1/nodes",
        (
            200,
            json!({"kind": "NodeList", "metadata": {}, "items": [
                node("gpu-a", "0", json!({"nvidia.com/gpu.present": "true"})),
                node("gpu-b", "1", json!({"nvidia.com/gpu.present": "true"})),
            ]}),
        ),
    );
    let pod = |ns: &str, name: &str, node: &str, labels: Value, gpus: Option<&str>| {
        let resources = gpus.map_or(json!({}), |g| json!({"limits": {"nvidia.com/gpu": g}}));
        json!({"metadata": {"namespace": ns, "name": name, "labels": labels},
               "spec": {"nodeName": node, "containers": [{"name": "c", "resources": resources}]},
               "status": {"phase": "Running", "containerStatuses": [{"state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}})
    };
    routes.insert(
        "/api/v1/pods",
        (
            200,
            json!({"kind": "PodList", "metadata": {}, "items": [
                pod("ml", "trainer-0", "gpu-b", json!({"app": "trainer"}), Some("1")),
                pod("gpu-operator", "nvidia-device-plugin-daemonset-x7", "gpu-a", json!({"app": "nvidia-device-plugin-daemonset"}), None),
                pod("kube-system", "coredns-1", "gpu-a", json!({"app": "coredns"}), None),
            ]}),
        ),
    );
    let client = mock(routes);
    let evs = collect(&client, "ml", &TargetSpec::Pod("p".into()))
        .await
        .expect("collects");
    let ev = &evs[0];
    let holders = ev.cluster.holders.as_ref().expect("holders read");
    assert_eq!(
        holders
            .iter()
            .map(|h| (h.name.as_str(), h.node.as_str(), h.count))
            .collect::<Vec<_>>(),
        vec![("trainer-0", "gpu-b", 1)]
    );
    let plugins = ev.cluster.device_plugins.as_ref().expect("plugins read");
    assert_eq!(
        plugins.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
        vec!["nvidia-device-plugin-daemonset-x7"]
    );
    // gpu-a has the hardware and advertises nothing: its crashing plugin Pod is named.
    let d = gpuwhy::diagnose::diagnose(ev);
    assert_eq!(d.primary.as_str(), "device-plugin", "{d:#?}");
    assert_eq!(
        d.causes[0].details["device_plugin_pod"],
        "gpu-operator/nvidia-device-plugin-daemonset-x7"
    );
}

#[tokio::test]
async fn malformed_optional_payloads_are_gaps() {
    let mut routes = Routes::new();
    routes.insert("/api/v1/namespaces/ml/pods/p", (200, pending_gpu_pod()));
    routes.insert(
        "/api/v1/nodes",
        (200, Value::String("{\"items\": \"not a list\"".into())),
    );
    routes.insert(
        "/apis/nvidia.com/v1/clusterpolicies",
        (
            200,
            json!({"items": [{"metadata": {"name": "cluster-policy"}, "status": {"state": 7}}]}),
        ),
    );
    let client = mock(routes);
    let evs = collect(&client, "ml", &TargetSpec::Pod("p".into()))
        .await
        .expect("malformed optional reads are gaps");
    let ev = &evs[0];
    assert!(ev.nodes.is_none());
    assert!(
        ev.gaps
            .iter()
            .any(|g| g.check == "nodes" && g.reason.contains("malformed")),
        "{:?}",
        ev.gaps
    );
    let d = gpuwhy::diagnose::diagnose(ev);
    assert_eq!(d.primary.as_str(), "insufficient-resource");
}

/// Both event APIs serve the same objects: core/v1 is read, and events.k8s.io/v1 only when core/v1 does not
/// answer (a Role that grants just the newer API). When neither answers, the events are a gap.
#[tokio::test]
async fn events_come_from_core_and_fall_back_to_events_v1() {
    let core_event = json!({"kind": "EventList", "metadata": {}, "items": [{"metadata": {"name": "a", "uid": "e-1"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "ml"}, "reason": "FailedScheduling", "type": "Warning",
        "message": "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."}]});
    let v1_event = json!({"kind": "EventList", "metadata": {}, "items": [{"metadata": {"name": "b", "uid": "e-2"},
        "regarding": {"kind": "Pod", "name": "p", "namespace": "ml"}, "reason": "FailedScheduling", "type": "Warning",
        "note": "0/2 nodes are available: 2 node(s) had untolerated taint {nvidia.com/gpu: present}. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."}]});
    let messages = |ev: &gpuwhy::evidence::Evidence| -> Vec<String> {
        ev.signals
            .iter()
            .filter(|s| s.reason.as_deref() == Some("FailedScheduling"))
            .map(|s| s.message.clone())
            .collect()
    };
    let mut routes = Routes::new();
    routes.insert("/api/v1/namespaces/ml/pods/p", (200, pending_gpu_pod()));
    routes.insert("/api/v1/namespaces/ml/events", (200, core_event));
    routes.insert(
        "/apis/events.k8s.io/v1/namespaces/ml/events",
        (200, v1_event.clone()),
    );
    let evs = collect(&mock(routes.clone()), "ml", &TargetSpec::Pod("p".into()))
        .await
        .expect("collects");
    let read = messages(&evs[0]);
    assert_eq!(read.len(), 1, "{read:?}");
    assert!(
        read[0].contains("Insufficient"),
        "core/v1 is read: {read:?}"
    );
    assert!(!evs[0].gaps.iter().any(|g| g.check == "events"));

    routes.insert("/api/v1/namespaces/ml/events", status(403, "Forbidden"));
    let evs = collect(&mock(routes.clone()), "ml", &TargetSpec::Pod("p".into()))
        .await
        .expect("collects");
    let read = messages(&evs[0]);
    assert!(
        read.len() == 1 && read[0].contains("untolerated taint"),
        "events.k8s.io/v1 is read when core/v1 is forbidden: {read:?}"
    );
    assert!(
        !evs[0].gaps.iter().any(|g| g.check == "events"),
        "{:?}",
        evs[0].gaps
    );
    assert_eq!(
        gpuwhy::diagnose::diagnose(&evs[0]).primary.as_str(),
        "taint"
    );

    routes.insert(
        "/apis/events.k8s.io/v1/namespaces/ml/events",
        status(403, "Forbidden"),
    );
    let evs = collect(&mock(routes.clone()), "ml", &TargetSpec::Pod("p".into()))
        .await
        .expect("collects");
    assert!(messages(&evs[0]).is_empty());
    let gap = evs[0].gaps.iter().find(|g| g.check == "events");
    assert!(
        gap.is_some_and(|g| g.reason.contains("forbidden")),
        "{:?}",
        evs[0].gaps
    );
    // core/v1 fails another way and events.k8s.io/v1 is forbidden: the gap names what RBAC would fix.
    routes.insert("/api/v1/namespaces/ml/events", status(500, "InternalError"));
    let evs = collect(&mock(routes), "ml", &TargetSpec::Pod("p".into()))
        .await
        .expect("collects");
    let gap = evs[0].gaps.iter().find(|g| g.check == "events");
    assert!(
        gap.is_some_and(|g| g.reason.contains("forbidden")),
        "{:?}",
        evs[0].gaps
    );
}

/// The owner's events come through the same fallback as the Pod's.
#[tokio::test]
async fn owner_events_fall_back_to_events_v1() {
    let mut pod = pending_gpu_pod();
    pod["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs-1", "uid": "o-1", "controller": true}]);
    let mut routes = Routes::new();
    routes.insert("/api/v1/namespaces/ml/pods/p", (200, pod));
    routes.insert("/api/v1/namespaces/ml/events", status(403, "Forbidden"));
    routes.insert(
        "/apis/events.k8s.io/v1/namespaces/ml/events",
        (
            200,
            json!({"kind": "EventList", "metadata": {}, "items": [{"metadata": {"name": "c", "uid": "e-3"},
                "regarding": {"kind": "ReplicaSet", "name": "rs-1", "namespace": "ml"}, "reason": "FailedCreate", "type": "Warning",
                "note": "Error creating: pods \"p-x\" is forbidden: exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=2, used: requests.nvidia.com/gpu=0, limited: requests.nvidia.com/gpu=1"}]}),
        ),
    );
    let evs = collect(&mock(routes), "ml", &TargetSpec::Pod("p".into()))
        .await
        .expect("collects");
    let owner: Vec<&str> = evs[0]
        .signals
        .iter()
        .filter(|s| s.source == Some(gpuwhy::evidence::SignalSource::OwnerEvent))
        .map(|s| s.message.as_str())
        .collect();
    assert!(
        owner.iter().any(|m| m.contains("exceeded quota")),
        "{owner:?} {:?}",
        evs[0].gaps
    );
    assert!(
        !evs[0].gaps.iter().any(|g| g.check.contains("events")),
        "{:?}",
        evs[0].gaps
    );
}

/// A workload's controllers' events and its Pods are read side by side: this apiserver answers no events
/// until the Pods have been listed, which a collection that waited on the events first would never do (the
/// held answers then fail after 2 s of silence).
#[tokio::test]
async fn a_workloads_events_and_its_pods_are_read_side_by_side() {
    let (svc, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let respond = |send: tower_test::mock::SendResponse<Response<Body>>, code: u16, body: Value| {
        send.send_response(
            Response::builder()
                .status(StatusCode::from_u16(code).unwrap())
                .body(Body::from(serde_json::to_vec(&body).unwrap()))
                .unwrap(),
        );
    };
    let server = tokio::spawn(async move {
        let mut held = Vec::new();
        let mut listed_while_events_waited = false;
        let mut pods_listed = false;
        while let Ok(Some((req, send))) =
            tokio::time::timeout(std::time::Duration::from_secs(2), handle.next_request()).await
        {
            match req.uri().path() {
                "/apis/apps/v1/namespaces/ml/deployments/d" => respond(
                    send,
                    200,
                    json!({"kind": "Deployment", "apiVersion": "apps/v1",
                        "metadata": {"name": "d", "namespace": "ml", "uid": "d-1"},
                        "spec": {"selector": {"matchLabels": {"app": "gpu"}}}}),
                ),
                "/api/v1/namespaces/ml/events" if !pods_listed => held.push(send),
                "/api/v1/namespaces/ml/events" => respond(
                    send,
                    200,
                    json!({"kind": "EventList", "metadata": {}, "items": []}),
                ),
                "/apis/apps/v1/namespaces/ml/replicasets" => respond(
                    send,
                    200,
                    json!({"kind": "ReplicaSetList", "metadata": {}, "items": []}),
                ),
                "/api/v1/namespaces/ml/pods" => {
                    pods_listed = true;
                    listed_while_events_waited = !held.is_empty();
                    respond(
                        send,
                        200,
                        json!({"kind": "PodList", "metadata": {}, "items": []}),
                    );
                    for send in held.drain(..) {
                        respond(
                            send,
                            200,
                            json!({"kind": "EventList", "metadata": {}, "items": []}),
                        );
                    }
                }
                other => respond(
                    send,
                    404,
                    json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404, "message": format!("{other} not found")}),
                ),
            }
        }
        listed_while_events_waited
    });
    let target = TargetSpec::Workload {
        kind: "Deployment".into(),
        name: "d".into(),
    };
    let evs = collect(&kube::Client::new(svc, "default"), "ml", &target)
        .await
        .expect("collects");
    assert_eq!(evs.len(), 1);
    assert!(evs[0].gaps.is_empty(), "{:?}", evs[0].gaps);
    assert!(
        server.await.unwrap(),
        "the Pods were listed only after the events were answered"
    );
}

/// A Pod that is not found takes its close names from one page of the namespace's Pods: this apiserver always
/// has another page, and a run that followed them would outlast its limit (`--request-timeout` times the
/// requests a Pod's collection makes one after another).
#[tokio::test]
async fn a_missing_pods_close_names_come_from_one_page() {
    let (svc, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let server = tokio::spawn(async move {
        let mut requests = 0;
        while let Ok(Some((req, send))) =
            tokio::time::timeout(std::time::Duration::from_secs(1), handle.next_request()).await
        {
            requests += 1;
            let (code, body) = if req.uri().path() == "/api/v1/namespaces/ml/pods" {
                (
                    200,
                    json!({"kind": "PodList", "metadata": {"continue": format!("page-{requests}")},
                        "items": [{"metadata": {"name": "trainer-0"}}]}),
                )
            } else {
                status(404, "NotFound")
            };
            send.send_response(
                Response::builder()
                    .status(StatusCode::from_u16(code).unwrap())
                    .body(Body::from(serde_json::to_vec(&body).unwrap()))
                    .unwrap(),
            );
        }
        requests
    });
    let target = TargetSpec::Pod("trainer-O".into());
    let e = collect(&kube::Client::new(svc, "default"), "ml", &target)
        .await
        .unwrap_err();
    assert_eq!(e.exit_code(), 2, "{e}");
    assert!(e.to_string().contains("did you mean trainer-0"), "{e}");
    let requests = server.await.unwrap();
    assert!(
        requests <= gpuwhy::collect::requests_in_sequence(&target),
        "{requests} requests"
    );
}

#[tokio::test]
async fn a_failing_pod_read_is_an_error() {
    let mut routes = Routes::new();
    routes.insert("/api/v1/namespaces/ml/pods/p", status(500, "InternalError"));
    let client = mock(routes);
    let e = collect(&client, "ml", &TargetSpec::Pod("p".into()))
        .await
        .unwrap_err();
    assert_eq!(e.exit_code(), 3, "{e}");
    let mut routes = Routes::new();
    routes.insert(
        "/api/v1/namespaces/ml/pods/p",
        (
            200,
            Value::String("{\"kind\": \"Pod\", \"metadata\": ".into()),
        ),
    );
    let e = collect(&mock(routes), "ml", &TargetSpec::Pod("p".into()))
        .await
        .unwrap_err();
    assert_eq!(e.exit_code(), 3, "{e}");
    let mut routes = Routes::new();
    routes.insert("/api/v1/namespaces/ml/pods", (200, json!({"items": [{"metadata": {"name": "trainer-0"}}, {"metadata": {"name": "other"}}]})));
    let e = collect(&mock(routes), "ml", &TargetSpec::Pod("trainer-O".into()))
        .await
        .unwrap_err();
    assert_eq!(e.exit_code(), 2);
    assert!(e.to_string().contains("did you mean trainer-0"), "{e}");
}
