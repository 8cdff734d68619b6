"""End-to-end tests: real `dagster-webserver`, real runs, a real (headless) browser."""
