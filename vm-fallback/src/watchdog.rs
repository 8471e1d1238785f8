//! Bounding a vCPU run by a deadline: a timer thread that kicks the vCPU
//! thread out of `KVM_RUN` with a real-time signal.
//!
//! How the kick works, without a race: while a run is armed, a thread-local
//! holds a pointer to that vCPU's `kvm_run.immediate_exit`. At the deadline
//! the timer thread sets a "fired" flag and sends the signal to the vCPU
//! thread; the handler (running on that thread) sets `immediate_exit`.
//! - If the thread was inside `KVM_RUN`, the signal alone makes it return
//!   `EINTR`.
//! - If it was in user space, about to enter, `immediate_exit` makes the
//!   next `KVM_RUN` return `EINTR` at once instead of running the guest.
//!
//! Either way the run loop sees `EINTR`, reads "fired" and stops. The timer
//! repeats the kick every few milliseconds until disarmed, for a KVM without
//! `immediate_exit`.
//!
//! The handler is process-wide and installed without `SA_RESTART` (that is
//! what makes `KVM_RUN` return): a kick that lands just after a run ended
//! finds no target and does nothing, though it can still interrupt a
//! blocking system call on that thread with `EINTR`, which std's I/O retries.
//!
//! A [`StopSignal`] ends a run early from another thread the same way:
//! while a run is armed with it, `stop()` makes the timer thread fire at
//! once. That is how a VMM pauses a guest to snapshot it.
//!
//! Not here: the run loop itself (`vcpu.rs`).

use std::cell::Cell;
use std::marker::PhantomData;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use vmm_sys_util::signal::{SIGRTMIN, register_signal_handler};

/// The kick is `SIGRTMIN + KICK_SIGNAL_OFFSET`. A real-time signal, so it
/// cannot collide with the classic signals a host process handles, and the
/// first one, as glibc's `SIGRTMIN` already skips the ones glibc keeps.
const KICK_SIGNAL_OFFSET: c_int = 0;

/// How often the kick is repeated after the deadline until the run loop
/// notices. With `immediate_exit` the first kick suffices; this bounds the
/// stop time where it is missing.
const KICK_REPEAT: Duration = Duration::from_millis(2);

thread_local! {
    /// `kvm_run.immediate_exit` of the vCPU this thread is running, while
    /// armed; null otherwise. Const-initialised and without a destructor, so
    /// reading it from the signal handler allocates nothing and cannot fail.
    static IMMEDIATE_EXIT: Cell<*mut u8> = const { Cell::new(std::ptr::null_mut()) };
}

/// Errors from arming the watchdog.
#[derive(Debug, thiserror::Error)]
pub enum WatchdogError {
    /// `sigaction` for the kick signal failed.
    #[error("cannot install the vCPU kick signal handler: {0}")]
    Install(#[source] vmm_sys_util::errno::Error),
    /// The timer thread could not be started.
    #[error("cannot start the vCPU watchdog thread: {0}")]
    Spawn(#[source] std::io::Error),
}

/// The signal number used to kick vCPU threads.
pub fn kick_signal() -> c_int {
    SIGRTMIN() + KICK_SIGNAL_OFFSET
}

extern "C" fn on_kick(_num: c_int, _info: *mut libc::siginfo_t, _ctx: *mut c_void) {
    let target = IMMEDIATE_EXIT.with(Cell::get);
    if !target.is_null() {
        // SAFETY: non-null only between `arm` and the drop of its `Armed`,
        // both on this thread; `arm`'s contract keeps the pointee (a byte of
        // the vCPU's mmapped `kvm_run`) valid for that whole time. A single
        // volatile byte store is async-signal-safe.
        unsafe { target.write_volatile(1) };
    }
}

fn install_handler() -> Result<(), WatchdogError> {
    static INSTALLED: OnceLock<Result<(), vmm_sys_util::errno::Error>> = OnceLock::new();
    let installed = INSTALLED.get_or_init(|| register_signal_handler(kick_signal(), on_kick));
    installed.map_err(WatchdogError::Install)
}

/// An armed watchdog for the current thread. Dropping it disarms: the timer
/// thread is stopped and joined before the thread-local is reset, so no
/// kick can arrive for a vCPU that is no longer running. Arms nest (a run
/// inside another run's exit handler): the outer target is put back.
#[derive(Debug)]
pub(crate) struct Armed {
    fired: Arc<AtomicBool>,
    /// The target of an enclosing arm on this thread, put back on disarm.
    previous: *mut u8,
    stop: Option<mpsc::Sender<Wake>>,
    /// The stop signal this run listens to, unregistered on disarm.
    signal: Option<StopSignal>,
    timer: Option<JoinHandle<()>>,
    /// `!Send`: it must be dropped on the thread it kicks, which is what
    /// keeps that thread alive while the timer may still signal it.
    _on_this_thread: PhantomData<*const ()>,
}

impl Armed {
    /// Whether the deadline passed.
    pub(crate) fn fired(&self) -> bool {
        self.fired.load(Ordering::SeqCst)
    }
}

impl Drop for Armed {
    fn drop(&mut self) {
        if let Some(signal) = self.signal.take() {
            signal.unregister();
        }
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(Wake::Disarm);
        }
        if let Some(timer) = self.timer.take() {
            let _ = timer.join();
        }
        IMMEDIATE_EXIT.with(|c| c.set(self.previous));
    }
}

/// Arms a watchdog that kicks the calling thread at `deadline`.
///
/// # Safety
///
/// `immediate_exit` must point at the `immediate_exit` byte of the `kvm_run`
/// mapping of the vCPU this thread runs, and stay valid until the returned
/// `Armed` is dropped.
pub(crate) unsafe fn arm(
    immediate_exit: *mut u8,
    deadline: Instant,
    signal: Option<&StopSignal>,
) -> Result<Armed, WatchdogError> {
    install_handler()?;
    let previous = IMMEDIATE_EXIT.with(|c| c.replace(immediate_exit));
    // SAFETY: pthread_self has no preconditions.
    let target = Kickable(unsafe { libc::pthread_self() });
    let fired = Arc::new(AtomicBool::new(false));
    let (stop, stopped) = mpsc::channel();
    let timer_fired = Arc::clone(&fired);
    let timer = thread::Builder::new()
        .name("vcpu-watchdog".into())
        .spawn(move || watch(target, deadline, &stopped, &timer_fired));
    match timer {
        Ok(timer) => {
            if let Some(signal) = signal {
                signal.register(stop.clone());
            }
            Ok(Armed {
                fired,
                previous,
                stop: Some(stop),
                signal: signal.cloned(),
                timer: Some(timer),
                _on_this_thread: PhantomData,
            })
        }
        Err(e) => {
            IMMEDIATE_EXIT.with(|c| c.set(previous));
            Err(WatchdogError::Spawn(e))
        }
    }
}

/// The thread to kick, as the timer thread holds it. `pthread_t` is an
/// integer on glibc but a pointer on musl, and pointers are not `Send`;
/// this one is only ever handed to `pthread_kill`, never dereferenced.
#[derive(Debug, Clone, Copy)]
struct Kickable(libc::pthread_t);

// SAFETY: the handle is an opaque thread id passed to pthread_kill only;
// the thread it names outlives the timer thread (see `watch`).
unsafe impl Send for Kickable {}

/// What wakes the timer thread before its deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wake {
    /// The run ended: stop watching.
    Disarm,
    /// A [`StopSignal`] fired: kick now.
    Stop,
}

/// The timer thread: wait for disarm, a stop, or the deadline; then kick
/// until disarmed.
fn watch(target: Kickable, deadline: Instant, wakes: &mpsc::Receiver<Wake>, fired: &AtomicBool) {
    let wait = deadline.saturating_duration_since(Instant::now());
    match wakes.recv_timeout(wait) {
        Err(RecvTimeoutError::Timeout) => {
            fired.store(true, Ordering::SeqCst);
            tracing::debug!("vCPU deadline passed, kicking");
        }
        Ok(Wake::Stop) => tracing::debug!("vCPU stop asked, kicking"),
        Ok(Wake::Disarm) | Err(RecvTimeoutError::Disconnected) => return,
    }
    loop {
        // SAFETY: `target` is the thread holding the `Armed`, which is
        // `!Send` and joins this thread when dropped, so `target` is alive
        // for every kick sent here.
        unsafe { libc::pthread_kill(target.0, kick_signal()) };
        match wakes.recv_timeout(KICK_REPEAT) {
            Ok(Wake::Stop) | Err(RecvTimeoutError::Timeout) => {}
            Ok(Wake::Disarm) | Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// Asks a running vCPU, from any thread, to leave its run loop at once
/// (between two instructions of the guest, never inside a device access).
/// Cheap to clone; every clone is the same signal. Once stopped it stays
/// stopped: a run armed with it later returns at once.
#[derive(Debug, Clone, Default)]
pub struct StopSignal(Arc<StopInner>);

#[derive(Debug, Default)]
struct StopInner {
    requested: AtomicBool,
    /// The timer thread of the run armed with this signal, if any.
    timer: Mutex<Option<mpsc::Sender<Wake>>>,
}

impl StopSignal {
    /// A signal not yet given.
    pub fn new() -> StopSignal {
        StopSignal::default()
    }

    /// Stops the run armed with this signal, now or as soon as one starts.
    pub fn stop(&self) {
        self.0.requested.store(true, Ordering::SeqCst);
        let timer = self.0.timer.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(timer) = timer.as_ref() {
            let _ = timer.send(Wake::Stop);
        }
    }

    /// Whether `stop` was called.
    pub fn requested(&self) -> bool {
        self.0.requested.load(Ordering::SeqCst)
    }

    fn register(&self, timer: mpsc::Sender<Wake>) {
        *self.0.timer.lock().unwrap_or_else(PoisonError::into_inner) = Some(timer);
    }

    fn unregister(&self) {
        *self.0.timer.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kick_sets_the_flag_and_the_byte_then_disarm_clears() {
        let mut byte = 0u8;
        // SAFETY: `byte` outlives `armed` (dropped below).
        let armed = unsafe { arm(&raw mut byte, Instant::now(), None) }.unwrap();
        let start = Instant::now();
        while !armed.fired() {
            assert!(start.elapsed() < Duration::from_secs(5));
            thread::yield_now();
        }
        // The signal is delivered to this thread on its next return from
        // the kernel; sleeping is one.
        while byte == 0 {
            assert!(start.elapsed() < Duration::from_secs(5));
            thread::sleep(Duration::from_millis(1));
            // SAFETY: plain read of a local the handler writes with a
            // volatile store.
            byte = unsafe { (&raw const byte).read_volatile() };
        }
        drop(armed);
        assert!(IMMEDIATE_EXIT.with(Cell::get).is_null());
    }

    #[test]
    fn disarm_before_deadline_never_fires() {
        let mut byte = 0u8;
        // SAFETY: `byte` outlives `armed`.
        let armed = unsafe {
            arm(
                &raw mut byte,
                Instant::now() + Duration::from_secs(60),
                None,
            )
        }
        .unwrap();
        let start = Instant::now();
        drop(armed);
        assert!(start.elapsed() < Duration::from_secs(1));
        assert_eq!(byte, 0);
    }

    #[test]
    fn a_stop_from_another_thread_kicks_before_the_deadline() {
        let mut byte = 0u8;
        let signal = StopSignal::new();
        // SAFETY: `byte` outlives `armed`.
        let armed = unsafe {
            arm(
                &raw mut byte,
                Instant::now() + Duration::from_secs(60),
                Some(&signal),
            )
        }
        .unwrap();
        let remote = signal.clone();
        thread::spawn(move || remote.stop()).join().unwrap();
        let start = Instant::now();
        while byte == 0 {
            assert!(start.elapsed() < Duration::from_secs(5));
            thread::sleep(Duration::from_millis(1));
            // SAFETY: as above.
            byte = unsafe { (&raw const byte).read_volatile() };
        }
        assert!(signal.requested() && !armed.fired());
        drop(armed);
    }
}
