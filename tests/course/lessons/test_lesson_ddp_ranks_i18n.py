"""Lesson 4's LayoutExplorer in pt-BR (course/lessons/ddp_ranks.py): its figure's words
through the course catalogue, Slurm's and torch's names unchanged.  No DDP run, no port:
only the layout figure (minislurm's ``distribute``)."""

from __future__ import annotations

from course.lessons.ddp_ranks import LayoutExplorer, layout_figure, step_layout


def test_the_pt_br_layout_explorers_figure_keeps_slurm_and_torch_words() -> None:
    e = LayoutExplorer(2, 2, "cyclic", lang="pt-BR")
    fig = e.figure_view.outputs[0]["data"]["application/vnd.plotly.v1+json"]
    layout = fig["layout"]
    assert layout["xaxis"]["title"]["text"] == "nó (SLURM_NODEID da esquerda para a direita)"
    assert layout["yaxis"]["title"]["text"] == "SLURM_LOCALID"
    assert layout["separators"] == ",."
    assert layout["title"]["text"] == "srun -N2 --ntasks-per-node=2 -m cyclic: WORLD_SIZE=4"
    assert [a["text"] for a in layout["annotations"]] == ["MASTER_ADDR = gpu01 (rank 0)"]
    assert fig["data"][0]["text"][0] == "rank 0<br>local 0"
    e.nodes.value = 3                                       # the language survives a redraw
    assert e.figure.layout.xaxis.title.text.startswith("nó (SLURM_NODEID")
    english = layout_figure(step_layout(2, 2, "cyclic")).to_dict()
    assert english["layout"]["xaxis"]["title"]["text"] == "node (SLURM_NODEID left to right)"
    assert LayoutExplorer(2, 2, "cyclic", lang="en").figure.to_dict() == english
    # only the axis title and the number separators differ between the two editions
    pt = layout_figure(step_layout(2, 2, "cyclic"), lang="pt-BR").to_dict()
    pt["layout"]["xaxis"]["title"] = english["layout"]["xaxis"]["title"]
    del pt["layout"]["separators"]
    assert pt == english
