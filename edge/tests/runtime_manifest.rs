//! `GET /v1/runtime` tells a caller what a sandbox offers before its first
//! command, and what it says is what the sandbox does: the packages it
//! lists import, `pip list` agrees, and it needs a member key.

mod support;

use serde_json::Value;
use support::{Backend, TestServer, client, get_json, post_run, script, wait_run};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_runtime_lists_python_packages_that_really_import() {
    let server = TestServer::start(Backend::Sqlite).await;
    let key = server.org("acme", 1_000_000).await;

    let anonymous = client()
        .get(format!("{}/v1/runtime", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status().as_u16(), 401);

    let (status, runtime) = get_json(&server.base, &key, "/v1/runtime").await;
    assert_eq!(status, 200, "{runtime}");
    assert_eq!(runtime["network"], false);
    assert_eq!(runtime["isolation"], "jail+wasm");
    let utilities = names(&runtime["shell"]["utilities"]);
    for tool in ["bash", "grep", "sed", "awk", "tar", "jq", "pip"] {
        assert!(
            utilities.iter().any(|u| u == tool),
            "{tool} in {utilities:?}"
        );
    }
    let version = |pkg: &str| -> String {
        runtime["python"]["packages"]
            .as_array()
            .and_then(|all| all.iter().find(|p| p["name"] == pkg))
            .and_then(|p| p["version"].as_str())
            .unwrap_or_else(|| panic!("{pkg} in {}", runtime["python"]))
            .to_owned()
    };
    let (numpy, pandas, matplotlib) = (version("numpy"), version("pandas"), version("matplotlib"));
    assert!(
        runtime["python"]["version"]
            .as_str()
            .unwrap()
            .starts_with("3.")
    );
    assert!(
        runtime["node"]["version"]
            .as_str()
            .is_some_and(|v| !v.is_empty())
    );

    // What the manifest says is what a run's sandbox (a jailed worker) has.
    let command = "python3 -c 'import numpy, pandas, matplotlib; print(numpy.__version__, pandas.__version__, matplotlib.__version__)'; \
                   pip list --format=freeze | grep -iE '^(numpy|pandas)=='; pip install requests; echo \"pip $?\"";
    let (_, _, run) = post_run(&server.base, &key, &script(command, 500_000), None).await;
    let id = run["id"].as_str().unwrap().to_string();
    let done = wait_run(&server.base, &key, &id).await;
    let output = shell_output(&done);
    assert!(
        output.contains(&format!("{numpy} {pandas} {matplotlib}\n")),
        "{output}"
    );
    assert!(output.contains(&format!("numpy=={numpy}\n")), "{output}");
    assert!(output.contains(&format!("pandas=={pandas}\n")), "{output}");
    assert!(output.contains("the sandbox has no network"), "{output}");
    assert!(output.contains("pip 1\n"), "{output}");
}

fn names(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Every `shell.output` chunk of the run's timeline, in order.
fn shell_output(run: &Value) -> String {
    run["timeline"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["type"] == "shell.output")
        .filter_map(|e| e["data"]["data"].as_str())
        .collect()
}
