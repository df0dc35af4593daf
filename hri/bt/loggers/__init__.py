"""Loggers of a running tree in BehaviorTree.CPP's own formats (its ``loggers/`` folder).

* :mod:`~hri.bt.loggers.tree_xml`: the tree as XML with each node's UID, as BehaviorTree.CPP's
  loggers and Groot2 publisher describe a tree (``WriteTreeToXML``);
* :mod:`~hri.bt.loggers.node_models`: the ``<TreeNodesModel>`` that XML ends with;
* :mod:`~hri.bt.loggers.xml_printer`: the XML text, laid out as tinyxml2 prints it;
* :mod:`~hri.bt.loggers.transitions`: every status transition of a tree's nodes, as it happens;
* :mod:`~hri.bt.loggers.file_logger`: ``.btlog`` files (BehaviorTree.CPP's ``FileLogger2``),
  which Groot2 opens, and :mod:`~hri.bt.loggers.btlog_reader`, which reads them back;
* :mod:`~hri.bt.loggers.groot2_publisher`: the tree served live to Groot2 over ZeroMQ
  (BehaviorTree.CPP's ``Groot2Publisher``), with Groot2's breakpoints and hooks on its nodes
  (:mod:`~hri.bt.loggers.groot2_hooks`).
"""
