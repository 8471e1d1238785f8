//! Every event type of a timeline, named once (API.md, "The timeline"),
//! with what the rest of the edge needs to know of each: whether it ends
//! a timeline, and whether it carries only status and billing (all a
//! zero-data-retention run stores, and all a full timeline still takes).

use std::fmt;

use crate::run::RunStatus;

/// The type of a timeline event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    BudgetReserved,
    VmReady,
    WorkerStarted,
    ModelCall,
    ShellCommand,
    ShellOutput,
    ShellExit,
    WebRequest,
    WebResponse,
    TimelineTruncated,
    FileWritten,
    FilesCollected,
    FileContent,
    VmDestroyed,
    SandboxEnded,
    RunSucceeded,
    RunFailed,
    RunTimedOut,
    RunBudgetExceeded,
    RunCancelled,
    WorkerDestroyed,
}

impl EventKind {
    /// Every kind, in the order a run's timeline shows them.
    pub const ALL: [EventKind; 21] = [
        EventKind::BudgetReserved,
        EventKind::VmReady,
        EventKind::WorkerStarted,
        EventKind::ModelCall,
        EventKind::ShellCommand,
        EventKind::ShellOutput,
        EventKind::ShellExit,
        EventKind::WebRequest,
        EventKind::WebResponse,
        EventKind::TimelineTruncated,
        EventKind::FileWritten,
        EventKind::FilesCollected,
        EventKind::FileContent,
        EventKind::VmDestroyed,
        EventKind::SandboxEnded,
        EventKind::RunSucceeded,
        EventKind::RunFailed,
        EventKind::RunTimedOut,
        EventKind::RunBudgetExceeded,
        EventKind::RunCancelled,
        EventKind::WorkerDestroyed,
    ];

    /// The type's name on the wire (`event:` of the stream, `type` of the
    /// run object's timeline) and in the store.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::BudgetReserved => "budget.reserved",
            EventKind::VmReady => "vm.ready",
            EventKind::WorkerStarted => "worker.started",
            EventKind::ModelCall => "model.call",
            EventKind::ShellCommand => "shell.command",
            EventKind::ShellOutput => "shell.output",
            EventKind::ShellExit => "shell.exit",
            EventKind::WebRequest => "web.request",
            EventKind::WebResponse => "web.response",
            EventKind::TimelineTruncated => "timeline.truncated",
            EventKind::FileWritten => "file.written",
            EventKind::FilesCollected => "files.collected",
            EventKind::FileContent => "file.content",
            EventKind::VmDestroyed => "vm.destroyed",
            EventKind::SandboxEnded => "sandbox.ended",
            EventKind::RunSucceeded => "run.succeeded",
            EventKind::RunFailed => "run.failed",
            EventKind::RunTimedOut => "run.timed_out",
            EventKind::RunBudgetExceeded => "run.budget_exceeded",
            EventKind::RunCancelled => "run.cancelled",
            EventKind::WorkerDestroyed => "worker.destroyed",
        }
    }

    /// The kind named `name`, if there is one.
    pub fn parse(name: &str) -> Option<EventKind> {
        EventKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The event that ends a run with `status` (`run.failed` for a status
    /// that is not an end).
    pub fn ending(status: RunStatus) -> EventKind {
        match status {
            RunStatus::Succeeded => EventKind::RunSucceeded,
            RunStatus::TimedOut => EventKind::RunTimedOut,
            RunStatus::BudgetExceeded => EventKind::RunBudgetExceeded,
            RunStatus::Cancelled => EventKind::RunCancelled,
            RunStatus::Failed | RunStatus::Queued | RunStatus::Running => EventKind::RunFailed,
        }
    }

    /// A run's outcome (`run.succeeded`, `run.failed`, …) or a sandbox's
    /// (`sandbox.ended`).
    pub fn is_outcome(self) -> bool {
        matches!(
            self,
            EventKind::SandboxEnded
                | EventKind::RunSucceeded
                | EventKind::RunFailed
                | EventKind::RunTimedOut
                | EventKind::RunBudgetExceeded
                | EventKind::RunCancelled
        )
    }

    /// Travels on the live stream only, never stored, and weighs nothing
    /// against the timeline's caps (its own cap is the outputs').
    pub fn is_live_only(self) -> bool {
        self == EventKind::FileContent
    }

    /// The last event of every timeline, whatever its outcome.
    pub fn is_last(self) -> bool {
        self == EventKind::WorkerDestroyed
    }

    /// Carries a run's status and billing, no user content: what a
    /// zero-data-retention run stores, and what a full timeline still
    /// takes.
    pub fn is_status_or_billing(self) -> bool {
        matches!(
            self,
            EventKind::BudgetReserved
                | EventKind::VmReady
                | EventKind::WorkerStarted
                | EventKind::ModelCall
                | EventKind::VmDestroyed
                | EventKind::SandboxEnded
                | EventKind::RunSucceeded
                | EventKind::RunFailed
                | EventKind::RunTimedOut
                | EventKind::RunBudgetExceeded
                | EventKind::RunCancelled
                | EventKind::WorkerDestroyed
        )
    }
}

impl fmt::Display for EventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_one_name_that_parses_back() {
        let mut names: Vec<&str> = EventKind::ALL.iter().map(|k| k.name()).collect();
        for kind in EventKind::ALL {
            assert_eq!(EventKind::parse(kind.name()), Some(kind));
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), EventKind::ALL.len());
        assert_eq!(EventKind::parse("worker.gone"), None);
    }

    #[test]
    fn only_the_worker_destroyed_event_ends_a_timeline() {
        let last: Vec<EventKind> = EventKind::ALL.into_iter().filter(|k| k.is_last()).collect();
        assert_eq!(last, [EventKind::WorkerDestroyed]);
        assert!(EventKind::WorkerDestroyed.is_status_or_billing());
        assert!(!EventKind::ShellOutput.is_status_or_billing());
    }
}
