"""Tests of the Streamlit app."""
