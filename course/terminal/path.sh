# minislurm first on PATH: sourced by every shell of a course terminal (POSIX sh).
# course/lab.py exports MINISLURM_PATH_FIRST (<repo>/bin:<repo>/.venv/bin) and points
# PROMPT_COMMAND (bash, before each prompt) and ENV (sh, at start) at this file, so that
# `sinfo`, `sbatch`, `srun`, ... are minislurm's whatever a profile did to PATH.
if [ -n "${MINISLURM_PATH_FIRST-}" ]; then
  case "$PATH" in
    "$MINISLURM_PATH_FIRST" | "$MINISLURM_PATH_FIRST":*) ;;
    *) PATH="$MINISLURM_PATH_FIRST:$PATH"; export PATH ;;
  esac
fi
