//! Conformance harness.
