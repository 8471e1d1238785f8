//! The runtime's errors: what can go wrong for the caller, never for the
//! host process. A guest misbehaving is not an error here; it is an
//! `ExecOutcome` with a limit or an exit code.

/// A failure of the runtime itself or of a request made to it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A component could not be compiled, loaded or linked.
    #[error("component `{0}`: {1}")]
    Component(String, String),
    /// A component imports something the sandbox does not offer (for
    /// example `wasi:sockets`), so it cannot run here.
    #[error("component `{0}` needs a capability the sandbox does not offer: {1}")]
    Capability(String, String),
    /// Every sandbox slot of this process is in use.
    #[error("too many sandboxes running at once in this process")]
    Busy,
    /// A file given to the sandbox could not be stored.
    #[error("cannot put `{path}` into the sandbox: {reason}")]
    PutFile {
        /// The path it was to be stored at.
        path: String,
        /// Why it could not be.
        reason: String,
    },
    /// The engine could not be set up.
    #[error("cannot set up the wasm engine: {0}")]
    Engine(String),
    /// The sandbox has been destroyed.
    #[error("the sandbox was destroyed")]
    Destroyed,
}
