//! Reference driver.
