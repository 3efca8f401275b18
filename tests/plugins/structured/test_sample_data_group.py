"""SampleDataGroup: building, reading, assigning, paths, arrays, copies, flat views, printing."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from feedline import types
from feedline.plugins.structured import SampleDataGroup
from tests.plugins.structured.helpers import LABELS, camera_format, sample_format

FLAT_NAMES = (
    "cams.[0].image",
    "cams.[0].annotation.bboxes",
    "cams.[0].annotation.cls",
    "cams.[1].image",
    "cams.[1].annotation.bboxes",
    "cams.[1].annotation.cls",
    "tok",
    "vals.[0]",
    "vals.[1]",
    "[7]",
)


# -- building -----------------------------------------------------------------------------


def test_flat_names_and_types_in_depth_first_order() -> None:
    root = sample_format()
    assert root.field_names_flat == FLAT_NAMES
    u8, f, i32 = types.UINT8, types.FLOAT, types.INT32
    assert root.field_types_flat == (u8, f, i32, u8, f, i32, u8, f, f, i32)
    assert root.get_type_of_field("tok") is types.STRING


def test_add_data_field_rejects_duplicates_bad_types_and_names() -> None:
    group = SampleDataGroup()
    group.add_data_field("a", types.FLOAT)
    with pytest.raises(KeyError, match="'a' already exists"):
        group.add_data_field("a", types.INT32)
    with pytest.raises(TypeError, match="add_data_group_field"):
        group.add_data_field("b", SampleDataGroup)
    with pytest.raises(TypeError, match="add_data_group_field"):
        group.add_data_field("b", SampleDataGroup())
    with pytest.raises(TypeError):
        group.add_data_field("b", types.DataType.NO_TYPE)
    with pytest.raises(ValueError, match="cannot have a mapping"):
        group.add_data_field("b", types.STRING, {"x": 1})
    with pytest.raises(TypeError, match="mapping must be a dict"):
        group.add_data_field("b", types.INT32, [1, 2])
    for bad in ("a.b", "[0]", "", "x]"):
        with pytest.raises(ValueError, match="not allowed"):
            group.add_data_field(bad, types.INT32)
    for bad in (True, 1.5, None):
        with pytest.raises(TypeError, match="str or an int"):
            group.add_data_field(bad, types.INT32)
    assert group.contained_top_level_field_names == ("a",)


def test_add_group_copies_the_blueprint_empty_and_inherits_flags() -> None:
    blueprint = camera_format()
    blueprint["image"] = [1, 2]
    root = SampleDataGroup()
    root.set_do_check_type(False)
    root.set_do_convert(False)
    root.add_data_group_field("cam", blueprint)
    assert root["cam"]["image"] is None
    assert blueprint["image"] is not None
    assert root["cam"]._check_type is False and root["cam"]["annotation"]._do_convert is False
    with pytest.raises(TypeError, match="SampleDataGroup blueprint"):
        root.add_data_group_field("x", {"a": 1})


def test_arrays_and_static_constructors() -> None:
    root = SampleDataGroup()
    root.add_data_field_array("v", types.INT32, 3, LABELS)
    root.add_data_group_field_array("g", camera_format(), 2)
    assert root["v"].contained_top_level_field_names == (0, 1, 2)
    root["v"][1] = "person"
    assert int(root["v"][1]) == 2
    free = SampleDataGroup.create_data_field_array(types.FLOAT, 2)
    assert free.is_data_field_array() and not free.is_data_group_field_array()
    groups = SampleDataGroup.create_data_group_field_array(camera_format(), 2)
    assert groups.is_data_group_field_array() and not groups.is_data_field_array()
    with pytest.raises(ValueError, match="num_fields"):
        SampleDataGroup.create_data_field_array(types.FLOAT, -1)


def test_array_predicates_with_edge_cases() -> None:
    root = sample_format()
    assert root.is_array("vals") and root.is_data_field_array("vals")
    assert root.is_array("cams") and root.is_data_group_field_array("cams")
    assert not root.is_data_field_array("cams") and not root.is_data_group_field_array("vals")
    # an empty group is an array of length 0 but of no element kind
    assert root.is_array("empty")
    assert not root.is_data_field_array("empty") and not root.is_data_group_field_array("empty")
    # a leaf is no array (no crash)
    for predicate in (root.is_array, root.is_data_field_array, root.is_data_group_field_array):
        assert predicate("tok") is False
        with pytest.raises(KeyError, match="missing"):
            predicate("missing")
    assert not root.is_array()
    out_of_order = SampleDataGroup()
    out_of_order.add_data_field(1, types.INT32)
    out_of_order.add_data_field(0, types.INT32)
    assert not out_of_order.is_array()


def test_remove_field_and_all_occurrences() -> None:
    root = sample_format()
    root.remove_field("tok")
    assert "tok" not in root
    with pytest.raises(KeyError, match="tok"):
        root.remove_field("tok")
    root.remove_all_occurrences("annotation")
    assert root.get_num_occurrences("bboxes") == 0
    assert root.field_names_flat == (
        "cams.[0].image",
        "cams.[1].image",
        "vals.[0]",
        "vals.[1]",
        "[7]",
    )
    root.remove_all_occurrences("not-there")


def test_find_all_occurrences_is_depth_first_and_finds_groups_and_nested_names() -> None:
    root = SampleDataGroup()
    inner = SampleDataGroup()
    inner.add_data_field("x", types.INT32)
    root.add_data_group_field("a", inner)
    root.add_data_field("x", types.INT32)
    root.add_data_group_field("x2", SampleDataGroup())
    assert root.find_all_occurrences("x") == (("a", "x"), ("x",))
    nested = SampleDataGroup()
    nested.add_data_group_field("x", inner)
    assert nested.find_all_occurrences("x") == (("x",), ("x", "x"))
    assert sample_format().find_all_occurrences(7) == ((7,),)
    assert sample_format().find_all_occurrences("7") == ()
    assert sample_format().get_num_occurrences("image") == 2


def test_change_type_of_leaf_and_group() -> None:
    root = sample_format()
    root["cams"][0]["image"] = [1, 2]
    root.change_type_of_data_and_remove_data(("cams", 0, "image"), types.FLOAT)
    assert root.get_type_of_item_in_path(("cams", 0, "image")) is types.FLOAT
    assert root["cams"][0]["image"] is None
    root.change_type_of_data_and_remove_data(("cams", 0, "annotation", "cls"), types.INT64)
    assert "cls" not in root["cams"][0]["annotation"]._mappings
    root.change_type_of_data_and_remove_data(7, types.INT64, {"a": 1})
    root[7] = "a"
    assert int(root[7]) == 1
    new_group = SampleDataGroup()
    new_group.add_data_field("z", types.UINT8)
    root.set_do_convert(False)
    root.change_type_of_data_and_remove_data("empty", new_group)
    assert root["empty"].field_names_flat == ("z",) and root["empty"]._do_convert is False
    with pytest.raises(TypeError, match="is a data field"):
        root.change_type_of_data_and_remove_data("tok", new_group)
    with pytest.raises(TypeError, match="is a data group field"):
        root.change_type_of_data_and_remove_data("empty", types.FLOAT)
    with pytest.raises(ValueError, match="cannot have a mapping"):
        root.change_type_of_data_and_remove_data("empty", new_group, {"a": 1})
    with pytest.raises(ValueError, match="cannot have a mapping"):
        root.change_type_of_data_and_remove_data("tok", types.STRING, {"a": 1})
    with pytest.raises(KeyError, match="nope"):
        root.change_type_of_data_and_remove_data(("cams", 0, "nope"), types.FLOAT)
    with pytest.raises(ValueError, match="non-empty"):
        root.change_type_of_data_and_remove_data((), types.FLOAT)


# -- reading and paths --------------------------------------------------------------------


def test_missing_names_raise_key_error_naming_them() -> None:
    root = sample_format()
    with pytest.raises(KeyError, match="'nope'"):
        root["nope"]
    with pytest.raises(KeyError, match="nope"):
        root["nope"] = 1
    with pytest.raises(KeyError, match="nope"):
        root.is_data_field("nope")
    with pytest.raises(KeyError, match="nope"):
        root.is_data_group_field("nope")
    with pytest.raises(KeyError, match="nope"):
        root.get_type_of_field("nope")


def test_get_and_set_item_in_path() -> None:
    root = sample_format()
    root.set_item_in_path(("cams", 1, "annotation", "bboxes"), [[1, 2, 3, 4]])
    value = root.get_item_in_path(["cams", 1, "annotation", "bboxes"])
    assert value.dtype == np.float32 and value.shape == (1, 4)
    assert root.get_item_in_path(()) is root
    assert root.get_item_in_path("tok") is None
    with pytest.raises(KeyError, match=r"cams\.\[5\]"):
        root.get_item_in_path(("cams", 5, "image"))
    with pytest.raises(KeyError, match=r"cams\.\[0\]\.image\.x"):
        root.get_item_in_path(("cams", 0, "image", "x"))
    with pytest.raises(KeyError, match=r"cams\.\[0\]\.nope"):
        root.set_item_in_path(("cams", 0, "nope"), 1)
    with pytest.raises(ValueError, match="non-empty"):
        root.set_item_in_path((), 1)
    with pytest.raises(TypeError, match="not a str or int"):
        root.get_item_in_path(("cams", 0.5))


def test_get_parent_of_path() -> None:
    root = sample_format()
    assert root.get_parent_of_path("tok") is root
    assert root.get_parent_of_path(("cams", 0, "image")) is root["cams"][0]
    with pytest.raises(KeyError, match="nope"):
        root.get_parent_of_path("nope")
    with pytest.raises(KeyError, match="is a data field"):
        root.get_parent_of_path(("tok", "x"))
    with pytest.raises(KeyError, match=r"no group 'cams\.\[3\]'"):
        root.get_parent_of_path(("cams", 3, "image"))
    with pytest.raises(ValueError, match="no parent"):
        root.get_parent_of_path(())


def test_path_predicates_answer_booleans() -> None:
    root = sample_format()
    assert root.path_exists(("cams", 0, "annotation", "cls"))
    assert root.path_exists(7) and root.path_exists(())
    for missing in (("cams", 9, "image"), ("tok", "x"), "nope", 8, ("cams", 0, "nope")):
        assert root.path_exists(missing) is False
        assert root.path_exists_and_is_data_group_field(missing) is False
    assert root.path_exists_and_is_data_group_field(("cams", 0))
    assert root.path_exists_and_is_data_group_field("empty")
    assert root.path_exists_and_is_data_group_field("tok") is False
    assert root.path_exists_and_is_data_group_field(7) is False
    assert SampleDataGroup.path_is_single_name("a") and SampleDataGroup.path_is_single_name(3)
    assert not SampleDataGroup.path_is_single_name(("a",))
    assert not SampleDataGroup.path_is_single_name(["a", 1])


def test_type_queries() -> None:
    root = sample_format()
    assert root.get_type_of_item_in_path(("cams", 0)) is SampleDataGroup
    assert root.get_type_of_item_in_path(()) is SampleDataGroup
    assert root.get_type_of_item_in_path("tok") is types.STRING
    with pytest.raises(KeyError, match=r"cams\.\[0\]\.x"):
        root.get_type_of_item_in_path(("cams", 0, "x"))
    assert root.has_child("tok") and not root.has_child("x")
    assert root.is_data_field("tok") and root.is_data_group_field("cams")
    assert root.contained_top_level_field_names == ("cams", "tok", "vals", "empty", 7)
    assert root.field_top_level_types == (
        SampleDataGroup,
        types.STRING,
        SampleDataGroup,
        SampleDataGroup,
        types.INT32,
    )


def test_len_iteration_and_membership() -> None:
    root = sample_format()
    assert len(root) == 5
    assert list(root) == ["cams", "tok", "vals", "empty", 7]
    assert list(root["vals"]) == [0, 1]
    assert "tok" in root and 7 in root and "7" not in root and "x" not in root
    assert [root["vals"][i] for i in root["vals"]] == [None, None]
    assert len(SampleDataGroup()) == 0


# -- assignment ---------------------------------------------------------------------------


def test_group_assignment_needs_the_same_format() -> None:
    root = sample_format()
    replacement = camera_format()
    replacement["image"] = [3]
    root["cams"][0] = replacement
    assert root["cams"][0] is replacement
    other = camera_format()
    other.remove_field("image")
    with pytest.raises(KeyError, match="'image' is missing"):
        root["cams"][0] = other
    with pytest.raises(TypeError, match="data group field"):
        root["cams"][0] = np.zeros(3)


# -- copies, flat data, comparison ---------------------------------------------------------


def filled() -> SampleDataGroup:
    root = sample_format()
    for cam in (0, 1):
        root["cams"][cam]["image"] = np.full((2, 2, 3), cam, np.uint8)
        root["cams"][cam]["annotation"]["bboxes"] = [[0, 0, 1, 1]]
        root["cams"][cam]["annotation"]["cls"] = ["car"]
    root["tok"] = "tag"
    root["vals"][0], root["vals"][1] = 1.5, 2.5
    root[7] = 3
    return root


def test_get_empty_like_self_and_get_copy() -> None:
    root = filled()
    empty = root.get_empty_like_self()
    assert empty.type_matches(root) and all(v is None for v in empty.get_data())
    copy = root.get_copy()
    assert copy.get_data()[0] is root.get_data()[0]
    copy.remove_field("tok")
    copy["vals"][0] = 9
    assert "tok" in root and float(root["vals"][0]) == 1.5
    assert copy["cams"][0]["annotation"]._mappings["cls"] == LABELS


def test_get_and_set_data_round_trip_and_length_checks() -> None:
    root = filled()
    data = root.get_data()
    assert isinstance(data, tuple) and len(data) == len(FLAT_NAMES)
    assert isinstance(root.get_data(as_list_type=True), list)
    target = root.get_empty_like_self()
    target.set_data(data)
    assert target["tok"] == "tag" and target["cams"][1]["image"] is data[3]
    with pytest.raises(ValueError, match="got 9 values for 10"):
        target.set_data(data[:-1])
    with pytest.raises(ValueError, match="got 11 values for 10"):
        target.set_data((*data, 1))
    assert SampleDataGroup().get_data() == ()


def test_set_data_from_iterator_output() -> None:
    root = sample_format()
    batch = {name: index for index, name in enumerate(FLAT_NAMES)}
    root.set_data_from_dali_generic_iterator_output([{}, batch], 1)
    assert root.get_data() == tuple(range(len(FLAT_NAMES)))
    del batch["tok"]
    with pytest.raises(KeyError, match="'tok'"):
        root.set_data_from_dali_generic_iterator_output([batch], 0)


def test_type_matches_and_first_discrepancy() -> None:
    a, b = sample_format(), sample_format()
    assert a.type_matches(b) and a.get_flat_index_first_discrepancy_to_other(b) == -1
    b.change_type_of_data_and_remove_data("tok", types.UINT8)
    assert not a.type_matches(b)
    assert a.get_flat_index_first_discrepancy_to_other(b) == -1  # strings travel as uint8
    b = sample_format()
    b.remove_field("empty")
    assert not a.type_matches(b) and a.get_flat_index_first_discrepancy_to_other(b) == -1
    b = sample_format()
    b.change_type_of_data_and_remove_data(("cams", 1, "image"), types.FLOAT)
    assert a.get_flat_index_first_discrepancy_to_other(b) == 3
    b = sample_format()
    b.remove_field(7)
    assert a.get_flat_index_first_discrepancy_to_other(b) == 9
    x, y = SampleDataGroup(), SampleDataGroup()
    x.add_data_field("a", types.INT32)
    x.add_data_field("b", types.INT32)
    y.add_data_field("b", types.INT32)
    y.add_data_field("a", types.INT32)
    assert not x.type_matches(y)
    assert "another order" in x.describe_difference(y)
    assert not x.type_matches("not a group")
    mapped = SampleDataGroup()
    mapped.add_data_field("a", types.INT32, {"q": 1})
    mapped.add_data_field("b", types.INT32)
    assert mapped.type_matches(x)


def test_describe_difference_names_the_field() -> None:
    a = sample_format()
    b = sample_format()
    assert a.describe_difference(b) is None
    b.change_type_of_data_and_remove_data(("cams", 1, "annotation", "cls"), types.INT64)
    assert a.describe_difference(b) == (
        "field 'cams.[1].annotation.cls' should have type INT32 but has INT64"
    )
    b = sample_format()
    b["cams"][0].add_data_field("extra", types.FLOAT)
    assert a.describe_difference(b) == "field 'cams.[0].extra' is not expected"
    b = sample_format()
    b.remove_field(7)
    assert a.describe_difference(b) == "field '[7]' is missing"


def test_to_dictionary_decodes_strings_and_keys_arrays_by_int() -> None:
    result = filled().to_dictionary()
    assert result["tok"] == "tag"
    assert set(result["cams"]) == {0, 1}
    assert result["cams"][1]["annotation"]["cls"].tolist() == [1]
    assert result["empty"] == {} and float(result["vals"][1]) == 2.5


def test_check_has_children_messages() -> None:
    root = sample_format()
    root.check_has_children("tok", "cams", "vals", ["cams"], current_name="root")
    root.check_has_children(data_field_children=["tok", 7])
    cases = [
        ({"data_field_children": "nope"}, "does not have child `nope`"),
        ({"data_field_children": "cams"}, "is not a data field"),
        ({"data_group_field_children": "tok"}, "is not a data group field"),
        ({"data_field_array_children": "cams"}, "is not a data field array"),
        ({"data_group_field_array_children": "vals"}, "is not a data group field array"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            root.check_has_children(**kwargs, current_name="root")
    with pytest.raises(ValueError, match="`root` does not have"):
        root.check_has_children("zzz", current_name="root")


def test_print_format() -> None:
    root = SampleDataGroup()
    cam = SampleDataGroup()
    cam.add_data_field("image", types.UINT8)
    root.add_data_group_field_array("cams", cam, 1)
    root.add_data_field("tok", types.STRING)
    root["tok"] = "x"
    assert str(root) == (
        "{\n  cams:\n  {\n    0:\n    {\n"
        "      image: DALIDataType.UINT8   (is set: False; mapping available: False)\n"
        "    }\n  }\n"
        "  tok: DALIDataType.STRING   (is set: True; mapping available: False)\n}\n"
    )
    assert root.get_string_no_details() == (
        "{\n  cams:\n  {\n    0:\n    {\n      image: DALIDataType.UINT8   \n    }\n  }\n"
        "  tok: DALIDataType.STRING   \n}\n"
    )
    assert repr(root) == "SampleDataGroup('cams', 'tok')"


def test_uniform_size_outside_the_pipeline_is_refused() -> None:
    root = filled()
    with pytest.raises(TypeError, match="only inside the pipeline"):
        root.ensure_uniform_size_in_batch(0)
    with pytest.raises(TypeError, match="only inside the pipeline"):
        root.ensure_uniform_size_in_batch_for_all_strings()


def test_pickle_round_trip() -> None:
    root = filled()
    back = pickle.loads(pickle.dumps(root))
    assert back.type_matches(root) and back["tok"] == "tag"
    assert back["cams"][0]["annotation"]._mappings["cls"] == LABELS


def test_filled_copies() -> None:
    root = filled()
    data = root.get_data()
    copy = root.get_empty_like_self().get_like_self_filled(list(data))
    assert copy.type_matches(root) and copy.get_data() == data and copy["tok"] == "tag"
    copy.remove_field("tok")
    copy["cams"][0].add_data_field("new", types.FLOAT)
    assert "tok" in root and "new" not in root["cams"][0]
    assert root.field_names_flat == FLAT_NAMES
    with pytest.raises(ValueError, match="got 9 values for 10"):
        root.get_like_self_filled(data[:-1])
    with pytest.raises(ValueError, match="got 11 values for 10"):
        root.get_like_self_filled((*data, 0))
    batch = dict(zip(FLAT_NAMES, data, strict=True))
    again = root.get_like_self_filled_from_iterator_output([batch], 0)
    assert again.get_data() == data and again is not root


def test_copies_share_the_format_until_one_changes_it() -> None:
    original = sample_format()
    copies = [original.get_empty_like_self() for _ in range(3)]
    copies[0].add_data_field("extra", types.INT8)
    copies[1]["cams"][1]["annotation"].remove_field("cls")
    copies[2].change_type_of_data_and_remove_data(("cams", 0, "annotation", "cls"), types.FLOAT)
    assert original.field_names_flat == FLAT_NAMES
    assert original.get_type_of_item_in_path(("cams", 0, "annotation", "cls")) is types.INT32
    assert original["cams"][0]["annotation"]._mappings["cls"] == LABELS
    assert copies[0].field_names_flat == (*FLAT_NAMES, "extra")
    assert "cams.[1].annotation.cls" not in copies[1].field_names_flat
    assert (
        copies[2].field_types_flat[2] is types.FLOAT
        and copies[1].field_types_flat[2] is types.INT32
    )
    original.add_data_field("late", types.INT8)
    assert "late" not in copies[1] and copies[1].field_names_flat[-1] == "[7]"
