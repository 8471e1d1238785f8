//! A chart an agent's python saves comes back to the API caller: until a
//! run's files can be fetched, `base64` of it in the run's timeline is the
//! way, through a real jailed worker and the scientific python.

mod support;

use base64::Engine as _;
use support::{Backend, TestServer, post_run, script, wait_run};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saved_png_is_read_back_from_the_timeline() {
    let server = TestServer::start(Backend::Sqlite).await;
    let key = server.org("acme", 1_000_000).await;
    // The scripted model runs each line of the prompt as one command.
    let command = r#"printf 'import matplotlib\nmatplotlib.use("Agg")\nimport matplotlib.pyplot as plt\nfig, ax = plt.subplots(figsize=(2, 1), dpi=50)\nax.plot([1, 3, 2])\nfig.savefig("chart.png")\n' > chart.py
python3 chart.py
echo "png:$(base64 -w0 chart.png):end""#;
    let (_, _, run) = post_run(&server.base, &key, &script(command, 500_000), None).await;
    let id = run["id"].as_str().unwrap().to_string();
    let done = wait_run(&server.base, &key, &id).await;
    assert_eq!(done["status"], "succeeded", "{done}");
    let output: String = done["timeline"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["type"] == "shell.output")
        .filter_map(|e| e["data"]["data"].as_str())
        .collect();
    let encoded = output
        .split("png:")
        .nth(1)
        .and_then(|rest| rest.split(":end").next())
        .unwrap_or_else(|| panic!("no png in the output: {output}"));
    let png = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .unwrap_or_else(|e| panic!("not base64 ({e}): {encoded:?} in {output:?}"));
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "a PNG signature");
    let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(png[20..24].try_into().unwrap());
    assert_eq!((width, height), (100, 50), "2x1 inches at 50 dpi");
}
