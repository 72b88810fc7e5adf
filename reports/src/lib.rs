//! Report writers.
