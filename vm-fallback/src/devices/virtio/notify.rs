//! Queue notifications without an exit. A write to a queue's
//! `QueueNotify` register would stop the vCPU and come to the VMM as an
//! MMIO exit; instead KVM signals an eventfd (ioeventfd, one a queue,
//! matched on the queue index the guest writes) and the vCPU goes on,
//! while a thread of the VMM serves the queue. Interrupts the other way
//! already go through an irqfd.

use std::os::fd::AsRawFd;
use std::thread::JoinHandle;

use vmm_sys_util::eventfd::EventFd;

use super::QueueNotified;
use super::mmio::QUEUE_NOTIFY;
use crate::vm::{Vm, VmError};

/// The thread serving one device's notifications; stopped and joined when
/// dropped.
pub struct Notifier {
    stop: EventFd,
    thread: Option<JoinHandle<()>>,
}

/// Why the notification thread could not be started.
#[derive(Debug, thiserror::Error)]
pub enum NotifierError {
    /// KVM refused an ioeventfd.
    #[error(transparent)]
    Vm(#[from] VmError),
    /// An eventfd or the thread could not be made.
    #[error("queue notifications: {0}")]
    Io(#[from] std::io::Error),
}

impl Notifier {
    /// Registers an ioeventfd for each of `queues` at the device's
    /// `QueueNotify` (`base` is its MMIO window) and starts the thread.
    pub fn start(
        vm: &Vm,
        base: u64,
        queues: u32,
        device: impl QueueNotified,
    ) -> Result<Notifier, NotifierError> {
        let mut events = Vec::new();
        for queue in 0..queues {
            let event = EventFd::new(libc::EFD_NONBLOCK)?;
            vm.register_ioevent(&event, base + QUEUE_NOTIFY, queue)?;
            events.push(event);
        }
        let stop = EventFd::new(libc::EFD_NONBLOCK)?;
        let stopped = stop.try_clone()?;
        let thread = std::thread::Builder::new()
            .name("virtio-notify".into())
            .spawn(move || serve(&events, &stopped, &device))?;
        Ok(Notifier {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Notifier {
    fn drop(&mut self) {
        let _ = self.stop.write(1);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Waits on every queue's eventfd and the stop eventfd; serves each queue
/// signalled (several notifications since the last wake are one drain).
fn serve(events: &[EventFd], stop: &EventFd, device: &impl QueueNotified) {
    let mut fds: Vec<libc::pollfd> = events
        .iter()
        .chain(std::iter::once(stop))
        .map(|e| libc::pollfd {
            fd: e.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    loop {
        // SAFETY: `fds` is a live array of `fds.len()` pollfds.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
        if ready < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            tracing::warn!(error = %std::io::Error::last_os_error(), "queue notifications stop");
            return;
        }
        if fds.last().is_some_and(|f| f.revents != 0) {
            return;
        }
        for (queue, (pollfd, event)) in (0u32..).zip(fds.iter().zip(events)) {
            if pollfd.revents & libc::POLLIN != 0 {
                let _ = event.read();
                device.notified(queue);
            }
        }
    }
}
