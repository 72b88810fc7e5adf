//! A stop flag whose sleeps end early once raised, so delayed answers never
//! hold up EOF handling or server shutdown.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

#[derive(Clone, Default)]
pub struct Stopper {
    inner: Arc<(Mutex<bool>, Condvar)>,
}

impl Stopper {
    pub fn stop(&self) {
        let (lock, cv) = &*self.inner;
        if let Ok(mut stopped) = lock.lock() {
            *stopped = true;
        }
        cv.notify_all();
    }

    /// Sleeps for `d` unless stopped first.
    pub fn sleep(&self, d: Duration) {
        let deadline = Instant::now() + d;
        let (lock, cv) = &*self.inner;
        let Ok(mut stopped) = lock.lock() else { return };
        while !*stopped {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            match cv.wait_timeout(stopped, left) {
                Ok((guard, _)) => stopped = guard,
                Err(_) => return,
            }
        }
    }
}
