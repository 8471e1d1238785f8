//! Only a microVM's worker takes a guest identity (the host's clock, fresh
//! entropy, the run id): any other worker refuses it rather than try to
//! set its host's clock, and carries on.

mod support;

use ephemeral_worker::channel::{read_frame, write_frame};
use ephemeral_worker::protocol::{FromWorker, GuestIdentity, ToWorker, WireLimits};

#[test]
fn a_worker_outside_a_microvm_refuses_a_guest_identity() {
    let (mut child, mut ours) = support::start_unjailed();
    let mut buf = Vec::new();
    let mut reader = ours.try_clone().unwrap();
    let limits = WireLimits::from(ephemeral_runtime::Limits::default());
    let identity = GuestIdentity {
        run_id: "run_x".into(),
        unix_time_ns: 0,
        entropy: vec![0; 32],
    };
    let start = ToWorker::Start {
        limits,
        guest: Some(identity),
    };
    write_frame(&mut ours, &start).unwrap();
    match read_frame::<_, FromWorker>(&mut reader, &mut buf).unwrap() {
        FromWorker::Error { message } => assert!(message.contains("microVM"), "{message}"),
        other => panic!("accepted: {other:?}"),
    }
    // The clock was not touched, and the worker still serves a plain start.
    let year_2020 = 1_577_836_800;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(now > year_2020);
    write_frame(
        &mut ours,
        &ToWorker::Start {
            limits,
            guest: None,
        },
    )
    .unwrap();
    assert!(matches!(
        read_frame::<_, FromWorker>(&mut reader, &mut buf).unwrap(),
        FromWorker::Started
    ));
    write_frame(&mut ours, &ToWorker::Destroy).unwrap();
    assert!(matches!(
        read_frame::<_, FromWorker>(&mut reader, &mut buf).unwrap(),
        FromWorker::Destroyed { .. }
    ));
    assert!(child.wait().unwrap().success());
}
