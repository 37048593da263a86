"""The course: manifest, lesson text, notebook widgets and the course build."""
